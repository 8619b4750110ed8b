CREATE TABLE "access_requests" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"role_id" uuid,
	"datasource_id" uuid,
	"reason" text NOT NULL,
	"duration_seconds" integer NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"decided_by" uuid,
	"decided_at" timestamp (3) with time zone,
	"decision_comment" text,
	"granted_until" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "access_requests_target_ck" CHECK ((kind = 'role' AND role_id IS NOT NULL AND datasource_id IS NULL)
        OR (kind = 'datasource' AND datasource_id IS NOT NULL AND role_id IS NULL))
);
--> statement-breakpoint
ALTER TABLE "datasource_access" ADD COLUMN "valid_from" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "datasource_access" ADD COLUMN "valid_until" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "policy_assignments" ADD COLUMN "valid_from" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "policy_assignments" ADD COLUMN "valid_until" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "role_members" ADD COLUMN "valid_from" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "role_members" ADD COLUMN "valid_until" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "access_requests" ADD CONSTRAINT "access_requests_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_requests" ADD CONSTRAINT "access_requests_role_id_roles_id_fk" FOREIGN KEY ("role_id") REFERENCES "public"."roles"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_requests" ADD CONSTRAINT "access_requests_datasource_id_datasources_id_fk" FOREIGN KEY ("datasource_id") REFERENCES "public"."datasources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "access_requests_status_idx" ON "access_requests" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "access_requests_user_idx" ON "access_requests" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "datasource_access_valid_until_idx" ON "datasource_access" USING btree ("valid_until") WHERE valid_until IS NOT NULL;--> statement-breakpoint
CREATE INDEX "policy_assignments_valid_until_idx" ON "policy_assignments" USING btree ("valid_until") WHERE valid_until IS NOT NULL;--> statement-breakpoint
CREATE INDEX "role_members_valid_until_idx" ON "role_members" USING btree ("valid_until") WHERE valid_until IS NOT NULL;