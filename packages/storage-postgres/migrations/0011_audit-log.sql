CREATE TABLE "postel"."audit_log" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"at" bigint NOT NULL,
	"tenant_id" text,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"target" text,
	"source" text NOT NULL,
	"detail" jsonb,
	"key" text
);
--> statement-breakpoint
CREATE UNIQUE INDEX "audit_log_key_idx" ON "postel"."audit_log" USING btree ("key") WHERE "postel"."audit_log"."key" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "audit_log_tenant_id_idx" ON "postel"."audit_log" USING btree ("tenant_id","id");--> statement-breakpoint
CREATE INDEX "audit_log_tenant_action_at_idx" ON "postel"."audit_log" USING btree ("tenant_id","action","at");--> statement-breakpoint
CREATE INDEX "audit_log_at_idx" ON "postel"."audit_log" USING btree ("at");