ALTER TABLE "catalog_tables" ADD COLUMN "view_definition" text;--> statement-breakpoint
ALTER TABLE "catalog_tables" ADD COLUMN "view_reads" jsonb;