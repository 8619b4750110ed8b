-- Keeps query_audit_counts in step with every insert into query_audit_log, whatever inserts it.
CREATE FUNCTION palisade_query_audit_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO query_audit_counts AS c (bucket, user_id, data_source_id, status, n)
  SELECT date_trunc('hour', created_at AT TIME ZONE 'UTC'), user_id, data_source_id, status, count(*)
  FROM inserted GROUP BY 1, 2, 3, 4
  ON CONFLICT (bucket, user_id, data_source_id, status) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER query_audit_log_count AFTER INSERT ON query_audit_log
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION palisade_query_audit_count();
