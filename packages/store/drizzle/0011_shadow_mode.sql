ALTER TABLE "query_audit_log" ADD COLUMN "shadow_policies" text;--> statement-breakpoint
ALTER TABLE "query_audit_log" ADD COLUMN "shadow_denied" boolean;--> statement-breakpoint
ALTER TABLE "policies" ADD COLUMN "enforcement" text DEFAULT 'enforce' NOT NULL;