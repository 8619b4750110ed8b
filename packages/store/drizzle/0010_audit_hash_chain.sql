ALTER TABLE "admin_audit_log" ADD COLUMN "chain_id" text;--> statement-breakpoint
ALTER TABLE "admin_audit_log" ADD COLUMN "chain_seq" bigint;--> statement-breakpoint
ALTER TABLE "admin_audit_log" ADD COLUMN "prev_hash" text;--> statement-breakpoint
ALTER TABLE "admin_audit_log" ADD COLUMN "hash" text;--> statement-breakpoint
ALTER TABLE "query_audit_log" ADD COLUMN "chain_id" text;--> statement-breakpoint
ALTER TABLE "query_audit_log" ADD COLUMN "chain_seq" bigint;--> statement-breakpoint
ALTER TABLE "query_audit_log" ADD COLUMN "prev_hash" text;--> statement-breakpoint
ALTER TABLE "query_audit_log" ADD COLUMN "hash" text;--> statement-breakpoint
CREATE INDEX "admin_audit_chain_idx" ON "admin_audit_log" USING btree ("chain_id","chain_seq");--> statement-breakpoint
CREATE INDEX "query_audit_chain_idx" ON "query_audit_log" USING btree ("chain_id","chain_seq");