CREATE TABLE "query_audit_chunks" (
	"id" uuid PRIMARY KEY NOT NULL,
	"format" smallint NOT NULL,
	"chain_id" text,
	"first_seq" bigint,
	"prev_hash" text,
	"hash" text,
	"first_at" bigint NOT NULL,
	"last_at" bigint NOT NULL,
	"entries" integer NOT NULL,
	"status_mask" smallint NOT NULL,
	"p_user_id" uuid[] NOT NULL,
	"p_username" text[] NOT NULL,
	"p_ds_id" uuid[] NOT NULL,
	"p_ds_name" text[] NOT NULL,
	"p_client_info" text[] NOT NULL,
	"texts" uuid[] NOT NULL,
	"e_id" uuid[] NOT NULL,
	"e_at" bigint[] NOT NULL,
	"e_principal" smallint[] NOT NULL,
	"e_original" smallint[] NOT NULL,
	"e_params" text[] NOT NULL,
	"e_rewritten" smallint[] NOT NULL,
	"e_policies" smallint[] NOT NULL,
	"e_elapsed" integer[] NOT NULL,
	"e_status" smallint[] NOT NULL,
	"e_error" smallint[] NOT NULL,
	"e_shadow" smallint[] NOT NULL,
	"e_shadow_denied" boolean[] NOT NULL,
	"e_hash" text[]
);
--> statement-breakpoint
CREATE TABLE "query_audit_texts" (
	"digest" uuid PRIMARY KEY NOT NULL,
	"body" text NOT NULL
);
--> statement-breakpoint
-- The texts of a query-audit entry are stored once, keyed by the first 16 bytes of their SHA-256.
CREATE FUNCTION palisade_text_digest(body text) RETURNS uuid LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT encode(substring(sha256(convert_to(body, 'UTF8')) FROM 1 FOR 16), 'hex')::uuid
$$;--> statement-breakpoint
-- Entries of the row-per-entry log move into batches of format 1: at most 500 entries of one
-- chain each, in chain order, every entry keeping its own HMAC link. Each entry gets five text
-- slots (original, rewritten, policies, error, shadow) at positions i, n+i, 2n+i, 3n+i, 4n+i.
INSERT INTO "query_audit_texts" ("digest", "body")
SELECT palisade_text_digest(t), t FROM (
  SELECT original_query AS t FROM query_audit_log
  UNION SELECT rewritten_query FROM query_audit_log
  UNION SELECT policies_applied FROM query_audit_log
  UNION SELECT error_message FROM query_audit_log
  UNION SELECT shadow_policies FROM query_audit_log
) s WHERE t IS NOT NULL
ON CONFLICT DO NOTHING;--> statement-breakpoint
INSERT INTO "query_audit_chunks" ("id", "format", "chain_id", "first_seq", "prev_hash", "hash",
  "first_at", "last_at", "entries", "status_mask", "p_user_id", "p_username", "p_ds_id", "p_ds_name",
  "p_client_info", "texts", "e_id", "e_at", "e_principal", "e_original", "e_params", "e_rewritten",
  "e_policies", "e_elapsed", "e_status", "e_error", "e_shadow", "e_shadow_denied", "e_hash")
SELECT
  (array_agg(id ORDER BY pos))[1], 1, chain_id, min(chain_seq), NULL, NULL,
  min(at), max(at), count(*)::int,
  bit_or(CASE status WHEN 'success' THEN 1 WHEN 'error' THEN 2 ELSE 4 END)::smallint,
  array_agg(user_id ORDER BY pos), array_agg(username ORDER BY pos),
  array_agg(data_source_id ORDER BY pos), array_agg(datasource_name ORDER BY pos),
  array_agg(client_info ORDER BY pos),
  array_agg(palisade_text_digest(original_query) ORDER BY pos)
    || array_agg(palisade_text_digest(rewritten_query) ORDER BY pos)
    || array_agg(palisade_text_digest(policies_applied) ORDER BY pos)
    || array_agg(palisade_text_digest(error_message) ORDER BY pos)
    || array_agg(palisade_text_digest(shadow_policies) ORDER BY pos),
  array_agg(id ORDER BY pos), array_agg(at ORDER BY pos), array_agg(pos::smallint ORDER BY pos),
  array_agg(pos::smallint ORDER BY pos), array_agg(NULL::text ORDER BY pos),
  array_agg(CASE WHEN rewritten_query IS NULL THEN NULL ELSE (n + pos)::smallint END ORDER BY pos),
  array_agg((2 * n + pos)::smallint ORDER BY pos),
  array_agg(execution_time_ms ORDER BY pos),
  array_agg(CASE status WHEN 'success' THEN 0 WHEN 'error' THEN 1 ELSE 2 END::smallint ORDER BY pos),
  array_agg(CASE WHEN error_message IS NULL THEN NULL ELSE (3 * n + pos)::smallint END ORDER BY pos),
  array_agg(CASE WHEN shadow_policies IS NULL THEN NULL ELSE (4 * n + pos)::smallint END ORDER BY pos),
  array_agg(shadow_denied ORDER BY pos),
  array_agg(hash ORDER BY pos)
FROM (
  SELECT g.*, ((rn - 1) % 500 + 1) AS pos, count(*) OVER (PARTITION BY chain_id, grp) AS n
  FROM (
    SELECT l.*, floor(extract(epoch FROM l.created_at) * 1000)::bigint AS at, r.rn, (r.rn - 1) / 500 AS grp
    FROM query_audit_log l
    JOIN (
      SELECT id, row_number() OVER (PARTITION BY chain_id ORDER BY chain_seq, created_at, id) AS rn
      FROM query_audit_log
    ) r ON r.id = l.id
  ) g
) e
GROUP BY chain_id, grp;--> statement-breakpoint
DROP TABLE "query_audit_log" CASCADE;--> statement-breakpoint
CREATE INDEX "query_audit_chunks_at_idx" ON "query_audit_chunks" USING btree ("first_at","id");--> statement-breakpoint
CREATE INDEX "query_audit_chunks_last_idx" ON "query_audit_chunks" USING btree ("last_at","id");--> statement-breakpoint
CREATE INDEX "query_audit_chunks_chain_idx" ON "query_audit_chunks" USING btree ("chain_id","first_seq");--> statement-breakpoint
DROP FUNCTION IF EXISTS palisade_query_audit_count();--> statement-breakpoint
-- Both tables are append-only, as the log they replace (docs/audit.md#append-only).
CREATE TRIGGER query_audit_chunks_append_only BEFORE UPDATE OR DELETE ON query_audit_chunks
  FOR EACH ROW EXECUTE FUNCTION palisade_audit_append_only();--> statement-breakpoint
CREATE TRIGGER query_audit_chunks_no_truncate BEFORE TRUNCATE ON query_audit_chunks
  FOR EACH STATEMENT EXECUTE FUNCTION palisade_audit_append_only();--> statement-breakpoint
CREATE TRIGGER query_audit_texts_append_only BEFORE UPDATE OR DELETE ON query_audit_texts
  FOR EACH ROW EXECUTE FUNCTION palisade_audit_append_only();--> statement-breakpoint
CREATE TRIGGER query_audit_texts_no_truncate BEFORE TRUNCATE ON query_audit_texts
  FOR EACH STATEMENT EXECUTE FUNCTION palisade_audit_append_only();
