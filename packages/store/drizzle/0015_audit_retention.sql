CREATE TABLE "query_audit_checkpoints" (
	"id" uuid PRIMARY KEY NOT NULL,
	"created_at" bigint NOT NULL,
	"cutoff" bigint NOT NULL,
	"positions" text NOT NULL,
	"removed_chunks" integer NOT NULL,
	"removed_entries" bigint NOT NULL,
	"signature" text NOT NULL
);
--> statement-breakpoint
CREATE INDEX "query_audit_checkpoints_cutoff_idx" ON "query_audit_checkpoints" USING btree ("cutoff");--> statement-breakpoint
-- Retention (docs/audit.md#retention): the query audit loses its oldest batches only in a
-- retention run, which first records a signed checkpoint. Checkpoints are append-only.
CREATE TRIGGER query_audit_checkpoints_append_only BEFORE UPDATE OR DELETE ON query_audit_checkpoints
  FOR EACH ROW EXECUTE FUNCTION palisade_audit_append_only();--> statement-breakpoint
CREATE TRIGGER query_audit_checkpoints_no_truncate BEFORE TRUNCATE ON query_audit_checkpoints
  FOR EACH STATEMENT EXECUTE FUNCTION palisade_audit_append_only();--> statement-breakpoint
-- A batch may be deleted only inside a retention run (SET LOCAL palisade.audit_retention = 'on')
-- and only when it ends before the cutoff of a checkpoint; UPDATE and TRUNCATE stay refused.
CREATE FUNCTION palisade_query_audit_chunk_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('palisade.audit_retention', true) = 'on'
     AND OLD.last_at < (SELECT max(cutoff) FROM query_audit_checkpoints) THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit log % is append-only: batches are removed only by retention, before the cutoff of a checkpoint', TG_TABLE_NAME;
END
$$;--> statement-breakpoint
-- A text may be deleted only inside a retention run, which deletes only texts no batch refers to.
CREATE FUNCTION palisade_query_audit_text_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('palisade.audit_retention', true) = 'on' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit log % is append-only: texts are removed only by retention', TG_TABLE_NAME;
END
$$;--> statement-breakpoint
DROP TRIGGER query_audit_chunks_append_only ON query_audit_chunks;--> statement-breakpoint
CREATE TRIGGER query_audit_chunks_append_only BEFORE UPDATE ON query_audit_chunks
  FOR EACH ROW EXECUTE FUNCTION palisade_audit_append_only();--> statement-breakpoint
CREATE TRIGGER query_audit_chunks_retention BEFORE DELETE ON query_audit_chunks
  FOR EACH ROW EXECUTE FUNCTION palisade_query_audit_chunk_delete();--> statement-breakpoint
DROP TRIGGER query_audit_texts_append_only ON query_audit_texts;--> statement-breakpoint
CREATE TRIGGER query_audit_texts_append_only BEFORE UPDATE ON query_audit_texts
  FOR EACH ROW EXECUTE FUNCTION palisade_audit_append_only();--> statement-breakpoint
CREATE TRIGGER query_audit_texts_retention BEFORE DELETE ON query_audit_texts
  FOR EACH ROW EXECUTE FUNCTION palisade_query_audit_text_delete();
