CREATE TABLE "login_audit_log" (
	"id" uuid PRIMARY KEY NOT NULL,
	"plane" text NOT NULL,
	"outcome" text NOT NULL,
	"reason" text NOT NULL,
	"username" text,
	"client_address" text,
	"datasource_name" text,
	"actor_id" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "login_audit_created_idx" ON "login_audit_log" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "login_audit_username_idx" ON "login_audit_log" USING btree ("username","created_at","id");--> statement-breakpoint
CREATE INDEX "login_audit_address_idx" ON "login_audit_log" USING btree ("client_address","created_at","id");--> statement-breakpoint
CREATE TRIGGER login_audit_log_append_only BEFORE UPDATE OR DELETE ON login_audit_log
  FOR EACH ROW EXECUTE FUNCTION palisade_audit_append_only();--> statement-breakpoint
CREATE TRIGGER login_audit_log_no_truncate BEFORE TRUNCATE ON login_audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION palisade_audit_append_only();
