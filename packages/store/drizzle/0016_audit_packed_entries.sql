ALTER TABLE "query_audit_chunks" ALTER COLUMN "e_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "query_audit_chunks" ALTER COLUMN "e_at" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "query_audit_chunks" ALTER COLUMN "e_principal" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "query_audit_chunks" ALTER COLUMN "e_original" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "query_audit_chunks" ALTER COLUMN "e_params" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "query_audit_chunks" ALTER COLUMN "e_rewritten" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "query_audit_chunks" ALTER COLUMN "e_policies" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "query_audit_chunks" ALTER COLUMN "e_elapsed" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "query_audit_chunks" ALTER COLUMN "e_status" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "query_audit_chunks" ALTER COLUMN "e_error" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "query_audit_chunks" ALTER COLUMN "e_shadow" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "query_audit_chunks" ALTER COLUMN "e_shadow_denied" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "query_audit_chunks" ADD COLUMN "p_counts" integer[];--> statement-breakpoint
ALTER TABLE "query_audit_chunks" ADD COLUMN "e_data" "bytea";--> statement-breakpoint
ALTER TABLE "query_audit_chunks" ADD COLUMN "e_literals" "bytea";--> statement-breakpoint
-- Format 3 batches compress their packed entries themselves: stored as they are, not again.
ALTER TABLE "query_audit_chunks" ALTER COLUMN "e_data" SET STORAGE EXTERNAL;--> statement-breakpoint
ALTER TABLE "query_audit_chunks" ALTER COLUMN "e_literals" SET STORAGE EXTERNAL;
