CREATE TABLE "catalog_tag_proposals" (
	"id" uuid PRIMARY KEY NOT NULL,
	"datasource_id" uuid NOT NULL,
	"schema_name" text NOT NULL,
	"table_name" text NOT NULL,
	"column_name" text NOT NULL,
	"tag" text NOT NULL,
	"confidence" real NOT NULL,
	"evidence" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"decided_by" uuid,
	"decided_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "catalog_tag_proposals_uq" UNIQUE("datasource_id","schema_name","table_name","column_name","tag")
);
--> statement-breakpoint
CREATE TABLE "catalog_tags" (
	"datasource_id" uuid NOT NULL,
	"schema_name" text NOT NULL,
	"table_name" text NOT NULL,
	"column_name" text DEFAULT '' NOT NULL,
	"tag" text NOT NULL,
	"created_by" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "catalog_tags_datasource_id_schema_name_table_name_column_name_tag_pk" PRIMARY KEY("datasource_id","schema_name","table_name","column_name","tag")
);
--> statement-breakpoint
ALTER TABLE "datasources" ADD COLUMN "classification_sampling" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "catalog_tag_proposals" ADD CONSTRAINT "catalog_tag_proposals_datasource_id_datasources_id_fk" FOREIGN KEY ("datasource_id") REFERENCES "public"."datasources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "catalog_tags" ADD CONSTRAINT "catalog_tags_datasource_id_datasources_id_fk" FOREIGN KEY ("datasource_id") REFERENCES "public"."datasources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "catalog_tag_proposals_status_idx" ON "catalog_tag_proposals" USING btree ("datasource_id","status") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "catalog_tags_tag_idx" ON "catalog_tags" USING btree ("datasource_id","tag");