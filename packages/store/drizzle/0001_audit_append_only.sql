-- Both audit logs are append-only (spec 2.2): refuse UPDATE, DELETE and TRUNCATE at the database level.
CREATE FUNCTION palisade_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit log % is append-only', TG_TABLE_NAME;
END
$$;--> statement-breakpoint
CREATE TRIGGER admin_audit_log_append_only BEFORE UPDATE OR DELETE ON admin_audit_log
  FOR EACH ROW EXECUTE FUNCTION palisade_audit_append_only();--> statement-breakpoint
CREATE TRIGGER admin_audit_log_no_truncate BEFORE TRUNCATE ON admin_audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION palisade_audit_append_only();--> statement-breakpoint
CREATE TRIGGER query_audit_log_append_only BEFORE UPDATE OR DELETE ON query_audit_log
  FOR EACH ROW EXECUTE FUNCTION palisade_audit_append_only();--> statement-breakpoint
CREATE TRIGGER query_audit_log_no_truncate BEFORE TRUNCATE ON query_audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION palisade_audit_append_only();
