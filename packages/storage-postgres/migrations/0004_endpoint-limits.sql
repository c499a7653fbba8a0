ALTER TABLE "postel"."endpoints" ADD COLUMN "max_in_flight" integer;--> statement-breakpoint
ALTER TABLE "postel"."endpoints" ADD COLUMN "rate_limit" double precision;