CREATE TABLE "postel"."endpoint_rate_buckets" (
	"endpoint_id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"tokens" double precision NOT NULL,
	"refilled_at" bigint NOT NULL
);
--> statement-breakpoint
DROP INDEX "postel"."deliveries_endpoint_status_idx";--> statement-breakpoint
CREATE INDEX "deliveries_endpoint_due_idx" ON "postel"."deliveries" USING btree ("endpoint_id","status","next_attempt_at");