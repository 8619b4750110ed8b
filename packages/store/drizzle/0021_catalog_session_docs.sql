-- Each catalog table keeps the document sessions read of it (name, kind, view definition and
-- reads, ancestors, primary key, selected columns in order), so a login reads one short text per
-- table instead of aggregating 100,000 column rows. Triggers keep it, whatever code path writes
-- the catalog: a stale document would show a session columns it may no longer see.
ALTER TABLE "catalog_tables" ADD COLUMN "session_doc" text;--> statement-breakpoint
CREATE FUNCTION palisade_session_doc(doc_table uuid, doc_name text, doc_type text,
  doc_definition text, doc_reads jsonb, doc_ancestors jsonb, doc_key jsonb)
RETURNS text LANGUAGE sql STABLE AS $$
  SELECT json_build_array(doc_name, doc_type, doc_definition, doc_reads, doc_ancestors, doc_key,
    (SELECT coalesce(json_agg(json_build_array(c.column_name, c.data_type, c.is_nullable)
       ORDER BY c.ordinal_position), '[]'::json)
     FROM catalog_columns c WHERE c.table_id = doc_table AND c.is_selected))::text
$$;--> statement-breakpoint
CREATE FUNCTION palisade_table_session_doc() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.session_doc := palisade_session_doc(NEW.id, NEW.table_name, NEW.table_type,
    NEW.view_definition, NEW.view_reads, NEW.ancestors, NEW.primary_key);
  RETURN NEW;
END
$$;--> statement-breakpoint
-- Only the fields the document holds: a change of selection alone does not rewrite it.
CREATE TRIGGER catalog_tables_session_doc
  BEFORE INSERT OR UPDATE OF table_name, table_type, view_definition, view_reads, ancestors, primary_key
  ON catalog_tables FOR EACH ROW EXECUTE FUNCTION palisade_table_session_doc();--> statement-breakpoint
-- Once per statement for the tables whose columns it wrote (a column keeps its table).
CREATE FUNCTION palisade_columns_session_docs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    UPDATE catalog_tables t SET session_doc = palisade_session_doc(t.id, t.table_name,
      t.table_type, t.view_definition, t.view_reads, t.ancestors, t.primary_key)
    WHERE t.id IN (SELECT table_id FROM old_columns);
  ELSE
    UPDATE catalog_tables t SET session_doc = palisade_session_doc(t.id, t.table_name,
      t.table_type, t.view_definition, t.view_reads, t.ancestors, t.primary_key)
    WHERE t.id IN (SELECT table_id FROM new_columns);
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER catalog_columns_inserted_session_docs AFTER INSERT ON catalog_columns
  REFERENCING NEW TABLE AS new_columns
  FOR EACH STATEMENT EXECUTE FUNCTION palisade_columns_session_docs();--> statement-breakpoint
CREATE TRIGGER catalog_columns_updated_session_docs AFTER UPDATE ON catalog_columns
  REFERENCING NEW TABLE AS new_columns
  FOR EACH STATEMENT EXECUTE FUNCTION palisade_columns_session_docs();--> statement-breakpoint
CREATE TRIGGER catalog_columns_deleted_session_docs AFTER DELETE ON catalog_columns
  REFERENCING OLD TABLE AS old_columns
  FOR EACH STATEMENT EXECUTE FUNCTION palisade_columns_session_docs();--> statement-breakpoint
UPDATE catalog_tables SET session_doc = palisade_session_doc(id, table_name, table_type,
  view_definition, view_reads, ancestors, primary_key);
