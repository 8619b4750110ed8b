ALTER TABLE "policies" ADD COLUMN "min_group_size" integer;--> statement-breakpoint
ALTER TABLE "policies" ADD COLUMN "allowed_aggregates" jsonb;--> statement-breakpoint
ALTER TABLE "roles" ADD COLUMN "limits" jsonb;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "limits" jsonb;