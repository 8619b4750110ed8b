CREATE TABLE "identity_providers" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"issuer" text NOT NULL,
	"client_id" text NOT NULL,
	"secret" text,
	"audiences" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"username_claim" text,
	"role_claim" text DEFAULT 'groups' NOT NULL,
	"attribute_mappings" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"role_mappings" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"jit_users" boolean DEFAULT false NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"created_by" uuid,
	"updated_by" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "identity_providers_name_unique" UNIQUE("name"),
	CONSTRAINT "identity_providers_issuer_unique" UNIQUE("issuer")
);
--> statement-breakpoint
CREATE TABLE "user_identities" (
	"user_id" uuid PRIMARY KEY NOT NULL,
	"identity_provider_id" uuid NOT NULL,
	"subject" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "role_members" ADD COLUMN "identity_provider_id" uuid;--> statement-breakpoint
ALTER TABLE "user_identities" ADD CONSTRAINT "user_identities_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_identities" ADD CONSTRAINT "user_identities_identity_provider_id_identity_providers_id_fk" FOREIGN KEY ("identity_provider_id") REFERENCES "public"."identity_providers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "user_identities_subject_uq" ON "user_identities" USING btree ("identity_provider_id","subject");--> statement-breakpoint
CREATE INDEX "user_identities_provider_idx" ON "user_identities" USING btree ("identity_provider_id");--> statement-breakpoint
ALTER TABLE "role_members" ADD CONSTRAINT "role_members_identity_provider_id_identity_providers_id_fk" FOREIGN KEY ("identity_provider_id") REFERENCES "public"."identity_providers"("id") ON DELETE cascade ON UPDATE no action;