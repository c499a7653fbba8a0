CREATE TABLE "postel"."held_keys" (
	"endpoint_id" text COLLATE "C" NOT NULL,
	"ordering_key" text COLLATE "C" NOT NULL,
	"delivery_id" text COLLATE "C" NOT NULL,
	"held_at" bigint NOT NULL,
	CONSTRAINT "held_keys_endpoint_id_ordering_key_pk" PRIMARY KEY("endpoint_id","ordering_key")
);
--> statement-breakpoint
ALTER TABLE "postel"."deliveries" ADD COLUMN "ordering_key" text;--> statement-breakpoint
ALTER TABLE "postel"."endpoints" ADD COLUMN "on_key_failure" text DEFAULT 'skip' NOT NULL;--> statement-breakpoint
ALTER TABLE "postel"."messages" ADD COLUMN "ordering_key" text;--> statement-breakpoint
CREATE INDEX "deliveries_key_open_idx" ON "postel"."deliveries" USING btree ((("endpoint_id" || ' ' || "ordering_key") COLLATE "C"),"status","message_id") WHERE "postel"."deliveries"."ordering_key" IS NOT NULL AND "postel"."deliveries"."status" IN ('pending', 'held', 'waiting');--> statement-breakpoint
CREATE INDEX "messages_unfanned_key_idx" ON "postel"."messages" USING btree ("ordering_key","id") WHERE "postel"."messages"."ordering_key" IS NOT NULL AND "postel"."messages"."fanned_out_at" IS NULL AND "postel"."messages"."status" = 'pending';