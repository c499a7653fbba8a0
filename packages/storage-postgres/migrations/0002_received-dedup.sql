-- Inbound dedup: one record per (source, webhook id), in state processing or done.
ALTER TABLE "postel"."received" DROP CONSTRAINT "received_pkey";--> statement-breakpoint
ALTER TABLE "postel"."received" ADD CONSTRAINT "received_source_id_pk" PRIMARY KEY("source","id");--> statement-breakpoint
ALTER TABLE "postel"."received" ADD COLUMN "status" text NOT NULL DEFAULT 'done';--> statement-breakpoint
ALTER TABLE "postel"."received" ALTER COLUMN "status" DROP DEFAULT;
