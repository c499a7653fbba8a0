ALTER TABLE "postel"."deliveries" ADD COLUMN "first_attempt_id" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "postel"."deliveries" ADD COLUMN "first_attempt_started_at" bigint;--> statement-breakpoint
ALTER TABLE "postel"."deliveries" ADD COLUMN "first_attempt_latency_ms" integer;--> statement-breakpoint
ALTER TABLE "postel"."deliveries" ADD COLUMN "first_attempt_outcome" text;--> statement-breakpoint
ALTER TABLE "postel"."deliveries" ADD COLUMN "first_attempt_status_code" integer;--> statement-breakpoint
ALTER TABLE "postel"."deliveries" ADD COLUMN "first_attempt_error_code" text;--> statement-breakpoint
ALTER TABLE "postel"."deliveries" ADD COLUMN "first_attempt_error" text;--> statement-breakpoint
ALTER TABLE "postel"."deliveries" ADD COLUMN "first_attempt_response_snippet" text;--> statement-breakpoint
-- Written by hand (drizzle-kit does not generate views): every attempt, wherever it is kept. Existing
-- attempts stay in "attempts"; from now on a delivery's first attempt is written into its own row.
CREATE VIEW "postel"."all_attempts" AS
SELECT
	d."first_attempt_id" AS "id",
	d."id" AS "delivery_id",
	d."message_id",
	d."endpoint_id",
	d."webhook_id",
	1 AS "attempt_number",
	d."first_attempt_started_at" AS "started_at",
	d."first_attempt_latency_ms" AS "latency_ms",
	d."first_attempt_outcome" AS "outcome",
	d."first_attempt_status_code" AS "status_code",
	d."first_attempt_error_code" AS "error_code",
	d."first_attempt_error" AS "error",
	d."first_attempt_response_snippet" AS "response_snippet"
FROM "postel"."deliveries" d
WHERE d."first_attempt_id" IS NOT NULL
UNION ALL
SELECT "id", "delivery_id", "message_id", "endpoint_id", "webhook_id", "attempt_number", "started_at",
	"latency_ms", "outcome", "status_code", "error_code", "error", "response_snippet"
FROM "postel"."attempts";
