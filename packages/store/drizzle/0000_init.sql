CREATE TABLE "attribute_definitions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"key" text NOT NULL,
	"entity_type" text NOT NULL,
	"display_name" text NOT NULL,
	"value_type" text NOT NULL,
	"default_value" jsonb,
	"allowed_values" jsonb,
	"description" text,
	"created_by" uuid,
	"updated_by" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "attribute_definitions_key_uq" UNIQUE("key","entity_type")
);
--> statement-breakpoint
CREATE TABLE "admin_audit_log" (
	"id" uuid PRIMARY KEY NOT NULL,
	"resource_type" text NOT NULL,
	"resource_id" uuid NOT NULL,
	"action" text NOT NULL,
	"actor_id" uuid NOT NULL,
	"changes" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "query_audit_counts" (
	"bucket" timestamp(0) NOT NULL,
	"user_id" uuid NOT NULL,
	"data_source_id" uuid NOT NULL,
	"status" text NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "query_audit_counts_bucket_user_id_data_source_id_status_pk" PRIMARY KEY("bucket","user_id","data_source_id","status")
);
--> statement-breakpoint
CREATE TABLE "query_audit_log" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"username" text NOT NULL,
	"data_source_id" uuid NOT NULL,
	"datasource_name" text NOT NULL,
	"original_query" text NOT NULL,
	"rewritten_query" text,
	"policies_applied" text DEFAULT '[]' NOT NULL,
	"execution_time_ms" integer,
	"client_info" text,
	"status" text NOT NULL,
	"error_message" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "catalog_columns" (
	"id" uuid PRIMARY KEY NOT NULL,
	"table_id" uuid NOT NULL,
	"column_name" text NOT NULL,
	"ordinal_position" integer NOT NULL,
	"data_type" text NOT NULL,
	"is_nullable" boolean DEFAULT true NOT NULL,
	"column_default" text,
	"is_selected" boolean DEFAULT true NOT NULL,
	CONSTRAINT "catalog_columns_name_uq" UNIQUE("table_id","column_name")
);
--> statement-breakpoint
CREATE TABLE "catalog_schemas" (
	"id" uuid PRIMARY KEY NOT NULL,
	"datasource_id" uuid NOT NULL,
	"schema_name" text NOT NULL,
	"schema_alias" text,
	"is_selected" boolean DEFAULT true NOT NULL,
	CONSTRAINT "catalog_schemas_name_uq" UNIQUE("datasource_id","schema_name")
);
--> statement-breakpoint
CREATE TABLE "catalog_tables" (
	"id" uuid PRIMARY KEY NOT NULL,
	"datasource_id" uuid NOT NULL,
	"schema_id" uuid NOT NULL,
	"table_name" text NOT NULL,
	"table_type" text DEFAULT 'TABLE' NOT NULL,
	"is_selected" boolean DEFAULT true NOT NULL,
	CONSTRAINT "catalog_tables_name_uq" UNIQUE("schema_id","table_name")
);
--> statement-breakpoint
CREATE TABLE "datasource_access" (
	"id" uuid PRIMARY KEY NOT NULL,
	"datasource_id" uuid NOT NULL,
	"scope" text NOT NULL,
	"user_id" uuid,
	"role_id" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "datasources" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"ds_type" text NOT NULL,
	"config" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"secret" text,
	"access_mode" text DEFAULT 'policy_required' NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"statement_timeout_ms" integer DEFAULT 0 NOT NULL,
	"pool_size" integer DEFAULT 10 NOT NULL,
	"last_sync_at" timestamp (3) with time zone,
	"last_sync_result" jsonb,
	"catalog_version" integer DEFAULT 0 NOT NULL,
	"created_by" uuid,
	"updated_by" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "datasources_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "decision_functions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"language" text DEFAULT 'javascript' NOT NULL,
	"decision_fn" text NOT NULL,
	"decision_config" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"evaluate_context" text NOT NULL,
	"on_error" text DEFAULT 'deny' NOT NULL,
	"log_level" text DEFAULT 'off' NOT NULL,
	"is_enabled" boolean DEFAULT true NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"artifact" text,
	"created_by" uuid,
	"updated_by" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "decision_functions_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "policies" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"policy_type" text NOT NULL,
	"targets" jsonb NOT NULL,
	"filter_expression" text,
	"mask_expression" text,
	"decision_function_id" uuid,
	"is_enabled" boolean DEFAULT true NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_by" uuid,
	"updated_by" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "policies_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "policy_assignments" (
	"id" uuid PRIMARY KEY NOT NULL,
	"policy_id" uuid NOT NULL,
	"datasource_id" uuid NOT NULL,
	"scope" text NOT NULL,
	"user_id" uuid,
	"role_id" uuid,
	"priority" integer DEFAULT 100 NOT NULL,
	"created_by" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "policy_versions" (
	"policy_id" uuid NOT NULL,
	"version" integer NOT NULL,
	"snapshot" jsonb NOT NULL,
	"created_by" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "policy_versions_policy_id_version_pk" PRIMARY KEY("policy_id","version")
);
--> statement-breakpoint
CREATE TABLE "column_anchors" (
	"id" uuid PRIMARY KEY NOT NULL,
	"datasource_id" uuid NOT NULL,
	"child_table_id" uuid NOT NULL,
	"resolved_column_name" text NOT NULL,
	"relationship_id" uuid,
	"actual_column_name" text,
	"created_by" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "column_anchors_uq" UNIQUE("datasource_id","child_table_id","resolved_column_name")
);
--> statement-breakpoint
CREATE TABLE "table_relationships" (
	"id" uuid PRIMARY KEY NOT NULL,
	"datasource_id" uuid NOT NULL,
	"child_table_id" uuid NOT NULL,
	"child_column_name" text NOT NULL,
	"parent_table_id" uuid NOT NULL,
	"parent_column_name" text NOT NULL,
	"created_by" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "table_relationships_uq" UNIQUE("child_table_id","child_column_name","parent_table_id","parent_column_name")
);
--> statement-breakpoint
CREATE TABLE "role_inheritance" (
	"role_id" uuid NOT NULL,
	"parent_role_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "role_inheritance_role_id_parent_role_id_pk" PRIMARY KEY("role_id","parent_role_id")
);
--> statement-breakpoint
CREATE TABLE "role_members" (
	"role_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "role_members_role_id_user_id_pk" PRIMARY KEY("role_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "roles" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"is_active" boolean DEFAULT true NOT NULL,
	"created_by" uuid,
	"updated_by" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "roles_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" uuid PRIMARY KEY NOT NULL,
	"username" text NOT NULL,
	"scram_verifier" text NOT NULL,
	"is_admin" boolean DEFAULT false NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"email" text,
	"display_name" text,
	"attributes" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"last_login_at" timestamp (3) with time zone,
	"password_changed_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"created_by" uuid,
	"updated_by" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "users_username_unique" UNIQUE("username")
);
--> statement-breakpoint
CREATE TABLE "store_state" (
	"id" integer PRIMARY KEY NOT NULL,
	"policy_version" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "store_state_single_row" CHECK ("store_state"."id" = 1)
);
--> statement-breakpoint
ALTER TABLE "catalog_columns" ADD CONSTRAINT "catalog_columns_table_id_catalog_tables_id_fk" FOREIGN KEY ("table_id") REFERENCES "public"."catalog_tables"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "catalog_schemas" ADD CONSTRAINT "catalog_schemas_datasource_id_datasources_id_fk" FOREIGN KEY ("datasource_id") REFERENCES "public"."datasources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "catalog_tables" ADD CONSTRAINT "catalog_tables_datasource_id_datasources_id_fk" FOREIGN KEY ("datasource_id") REFERENCES "public"."datasources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "catalog_tables" ADD CONSTRAINT "catalog_tables_schema_id_catalog_schemas_id_fk" FOREIGN KEY ("schema_id") REFERENCES "public"."catalog_schemas"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "datasource_access" ADD CONSTRAINT "datasource_access_datasource_id_datasources_id_fk" FOREIGN KEY ("datasource_id") REFERENCES "public"."datasources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "datasource_access" ADD CONSTRAINT "datasource_access_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "datasource_access" ADD CONSTRAINT "datasource_access_role_id_roles_id_fk" FOREIGN KEY ("role_id") REFERENCES "public"."roles"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policies" ADD CONSTRAINT "policies_decision_function_id_decision_functions_id_fk" FOREIGN KEY ("decision_function_id") REFERENCES "public"."decision_functions"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policy_assignments" ADD CONSTRAINT "policy_assignments_policy_id_policies_id_fk" FOREIGN KEY ("policy_id") REFERENCES "public"."policies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policy_assignments" ADD CONSTRAINT "policy_assignments_datasource_id_datasources_id_fk" FOREIGN KEY ("datasource_id") REFERENCES "public"."datasources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policy_assignments" ADD CONSTRAINT "policy_assignments_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policy_assignments" ADD CONSTRAINT "policy_assignments_role_id_roles_id_fk" FOREIGN KEY ("role_id") REFERENCES "public"."roles"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "column_anchors" ADD CONSTRAINT "column_anchors_datasource_id_datasources_id_fk" FOREIGN KEY ("datasource_id") REFERENCES "public"."datasources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "column_anchors" ADD CONSTRAINT "column_anchors_child_table_id_catalog_tables_id_fk" FOREIGN KEY ("child_table_id") REFERENCES "public"."catalog_tables"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "column_anchors" ADD CONSTRAINT "column_anchors_relationship_id_table_relationships_id_fk" FOREIGN KEY ("relationship_id") REFERENCES "public"."table_relationships"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "table_relationships" ADD CONSTRAINT "table_relationships_datasource_id_datasources_id_fk" FOREIGN KEY ("datasource_id") REFERENCES "public"."datasources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "table_relationships" ADD CONSTRAINT "table_relationships_child_table_id_catalog_tables_id_fk" FOREIGN KEY ("child_table_id") REFERENCES "public"."catalog_tables"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "table_relationships" ADD CONSTRAINT "table_relationships_parent_table_id_catalog_tables_id_fk" FOREIGN KEY ("parent_table_id") REFERENCES "public"."catalog_tables"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "role_inheritance" ADD CONSTRAINT "role_inheritance_role_id_roles_id_fk" FOREIGN KEY ("role_id") REFERENCES "public"."roles"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "role_inheritance" ADD CONSTRAINT "role_inheritance_parent_role_id_roles_id_fk" FOREIGN KEY ("parent_role_id") REFERENCES "public"."roles"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "role_members" ADD CONSTRAINT "role_members_role_id_roles_id_fk" FOREIGN KEY ("role_id") REFERENCES "public"."roles"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "role_members" ADD CONSTRAINT "role_members_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "admin_audit_created_idx" ON "admin_audit_log" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "admin_audit_resource_type_idx" ON "admin_audit_log" USING btree ("resource_type","created_at","id");--> statement-breakpoint
CREATE INDEX "admin_audit_resource_idx" ON "admin_audit_log" USING btree ("resource_id","created_at","id");--> statement-breakpoint
CREATE INDEX "admin_audit_actor_idx" ON "admin_audit_log" USING btree ("actor_id","created_at","id");--> statement-breakpoint
CREATE INDEX "query_audit_created_idx" ON "query_audit_log" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "query_audit_user_idx" ON "query_audit_log" USING btree ("user_id","created_at","id");--> statement-breakpoint
CREATE INDEX "query_audit_ds_idx" ON "query_audit_log" USING btree ("data_source_id","created_at","id");--> statement-breakpoint
CREATE INDEX "query_audit_status_idx" ON "query_audit_log" USING btree ("status","created_at","id");--> statement-breakpoint
CREATE INDEX "catalog_tables_ds_idx" ON "catalog_tables" USING btree ("datasource_id");--> statement-breakpoint
CREATE UNIQUE INDEX "datasource_access_user_uq" ON "datasource_access" USING btree ("datasource_id","user_id") WHERE scope = 'user';--> statement-breakpoint
CREATE UNIQUE INDEX "datasource_access_role_uq" ON "datasource_access" USING btree ("datasource_id","role_id") WHERE scope = 'role';--> statement-breakpoint
CREATE UNIQUE INDEX "datasource_access_all_uq" ON "datasource_access" USING btree ("datasource_id") WHERE scope = 'all';--> statement-breakpoint
CREATE INDEX "datasource_access_user_idx" ON "datasource_access" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "datasource_access_role_idx" ON "datasource_access" USING btree ("role_id");--> statement-breakpoint
CREATE UNIQUE INDEX "policy_assignments_user_uq" ON "policy_assignments" USING btree ("policy_id","datasource_id","user_id") WHERE scope = 'user';--> statement-breakpoint
CREATE UNIQUE INDEX "policy_assignments_role_uq" ON "policy_assignments" USING btree ("policy_id","datasource_id","role_id") WHERE scope = 'role';--> statement-breakpoint
CREATE UNIQUE INDEX "policy_assignments_all_uq" ON "policy_assignments" USING btree ("policy_id","datasource_id") WHERE scope = 'all';--> statement-breakpoint
CREATE INDEX "policy_assignments_ds_idx" ON "policy_assignments" USING btree ("datasource_id");--> statement-breakpoint
CREATE INDEX "policy_assignments_user_idx" ON "policy_assignments" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "policy_assignments_role_idx" ON "policy_assignments" USING btree ("role_id");--> statement-breakpoint
CREATE INDEX "column_anchors_rel_idx" ON "column_anchors" USING btree ("relationship_id");--> statement-breakpoint
CREATE INDEX "table_relationships_ds_idx" ON "table_relationships" USING btree ("datasource_id");--> statement-breakpoint
CREATE INDEX "role_inheritance_parent_idx" ON "role_inheritance" USING btree ("parent_role_id");--> statement-breakpoint
CREATE INDEX "role_members_user_idx" ON "role_members" USING btree ("user_id");