CREATE TABLE "statement_rate_counts" (
	"user_id" uuid NOT NULL,
	"window" integer NOT NULL,
	"count" integer NOT NULL,
	CONSTRAINT "statement_rate_counts_user_id_window_pk" PRIMARY KEY("user_id","window")
);
--> statement-breakpoint
CREATE TABLE "statement_slots" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "statement_slots_user_idx" ON "statement_slots" USING btree ("user_id","expires_at");