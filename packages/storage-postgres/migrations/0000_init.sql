CREATE TABLE "postel"."attempts" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"delivery_id" text COLLATE "C" NOT NULL,
	"message_id" text COLLATE "C" NOT NULL,
	"endpoint_id" text COLLATE "C" NOT NULL,
	"webhook_id" text NOT NULL,
	"attempt_number" integer NOT NULL,
	"started_at" bigint NOT NULL,
	"latency_ms" integer NOT NULL,
	"outcome" text NOT NULL,
	"status_code" integer,
	"error_code" text,
	"error" text,
	"response_snippet" text
);
--> statement-breakpoint
CREATE TABLE "postel"."deliveries" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"message_id" text COLLATE "C" NOT NULL,
	"endpoint_id" text COLLATE "C" NOT NULL,
	"webhook_id" text NOT NULL,
	"status" text NOT NULL,
	"retries_used" integer DEFAULT 0 NOT NULL,
	"attempts_made" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" bigint NOT NULL,
	"lease_token" text,
	"lease_owner" text,
	"last_error" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "postel"."endpoint_health" (
	"endpoint_id" text COLLATE "C" NOT NULL,
	"bucket_start" bigint NOT NULL,
	"attempts" integer NOT NULL,
	"failures" integer NOT NULL,
	CONSTRAINT "endpoint_health_endpoint_id_bucket_start_pk" PRIMARY KEY("endpoint_id","bucket_start")
);
--> statement-breakpoint
CREATE TABLE "postel"."endpoint_secrets" (
	"seq" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "postel"."endpoint_secrets_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"endpoint_id" text COLLATE "C" NOT NULL,
	"secret" text NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint
);
--> statement-breakpoint
CREATE TABLE "postel"."endpoints" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"url" text NOT NULL,
	"description" text,
	"types" jsonb NOT NULL,
	"filter" jsonb,
	"filter_fn" text,
	"transform" text,
	"headers" jsonb NOT NULL,
	"retry_policy" jsonb,
	"circuit_breaker" jsonb,
	"auto_disable" jsonb,
	"tenant_id" text,
	"metadata" jsonb NOT NULL,
	"state" text NOT NULL,
	"circuit_open_until" bigint,
	"disabled_reason" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"deleted_at" bigint
);
--> statement-breakpoint
CREATE TABLE "postel"."messages" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"payload" text NOT NULL,
	"tenant_id" text,
	"idempotency_key" text,
	"status" text DEFAULT 'pending' NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint,
	"fanned_out_at" bigint,
	"finished_at" bigint,
	"lease_token" text,
	"lease_owner" text,
	"lease_until" bigint
);
--> statement-breakpoint
CREATE TABLE "postel"."meta" (
	"key" text PRIMARY KEY NOT NULL,
	"value" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "postel"."received" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"source" text NOT NULL,
	"received_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "postel"."deliveries" ADD CONSTRAINT "deliveries_message_id_messages_id_fk" FOREIGN KEY ("message_id") REFERENCES "postel"."messages"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "postel"."endpoint_secrets" ADD CONSTRAINT "endpoint_secrets_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "postel"."endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "attempts_message_id_idx" ON "postel"."attempts" USING btree ("message_id");--> statement-breakpoint
CREATE INDEX "deliveries_due_idx" ON "postel"."deliveries" USING btree ("next_attempt_at","id") WHERE "postel"."deliveries"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "deliveries_message_id_idx" ON "postel"."deliveries" USING btree ("message_id");--> statement-breakpoint
CREATE INDEX "deliveries_endpoint_status_idx" ON "postel"."deliveries" USING btree ("endpoint_id","status");--> statement-breakpoint
CREATE INDEX "deliveries_dead_lettered_idx" ON "postel"."deliveries" USING btree ("id") WHERE "postel"."deliveries"."status" = 'dead-lettered';--> statement-breakpoint
CREATE INDEX "endpoint_secrets_endpoint_id_idx" ON "postel"."endpoint_secrets" USING btree ("endpoint_id");--> statement-breakpoint
CREATE UNIQUE INDEX "messages_idempotency_key_idx" ON "postel"."messages" USING btree ("idempotency_key") WHERE "postel"."messages"."idempotency_key" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "messages_fanout_due_idx" ON "postel"."messages" USING btree ("created_at","id") WHERE "postel"."messages"."fanned_out_at" IS NULL AND "postel"."messages"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "received_expires_at_idx" ON "postel"."received" USING btree ("expires_at");