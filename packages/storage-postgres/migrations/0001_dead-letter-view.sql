-- Custom migration (drizzle-kit cannot express these): the dead_letter view and the meta counters.
CREATE VIEW "postel"."dead_letter" AS
SELECT
	d."id" AS "delivery_id",
	d."message_id",
	d."endpoint_id",
	e."url" AS "endpoint_url",
	d."webhook_id",
	m."type" AS "event_type",
	m."payload",
	m."tenant_id",
	d."retries_used",
	d."attempts_made",
	d."last_error",
	m."created_at" AS "message_created_at",
	d."updated_at" AS "dead_lettered_at"
FROM "postel"."deliveries" d
JOIN "postel"."messages" m ON m."id" = d."message_id"
LEFT JOIN "postel"."endpoints" e ON e."id" = d."endpoint_id"
WHERE d."status" = 'dead-lettered';
--> statement-breakpoint
INSERT INTO "postel"."meta" ("key", "value") VALUES ('endpoints_revision', 0) ON CONFLICT ("key") DO NOTHING;
