CREATE TABLE `postel_attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`delivery_id` text NOT NULL,
	`message_id` text NOT NULL,
	`endpoint_id` text NOT NULL,
	`webhook_id` text NOT NULL,
	`attempt_number` integer NOT NULL,
	`started_at` integer NOT NULL,
	`latency_ms` integer NOT NULL,
	`outcome` text NOT NULL,
	`status_code` integer,
	`error_code` text,
	`error` text,
	`response_snippet` text,
	FOREIGN KEY (`delivery_id`) REFERENCES `postel_deliveries`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `postel_attempts_message` ON `postel_attempts` (`message_id`,`started_at`,`attempt_number`);--> statement-breakpoint
CREATE TABLE `postel_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`message_id` text NOT NULL,
	`endpoint_id` text NOT NULL,
	`webhook_id` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`retries_used` integer DEFAULT 0 NOT NULL,
	`attempts_made` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`lease_token` text,
	`lease_owner` text,
	`last_error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`message_id`) REFERENCES `postel_messages`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `postel_deliveries_due` ON `postel_deliveries` (`next_attempt_at`,`id`) WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX `postel_deliveries_message` ON `postel_deliveries` (`message_id`);--> statement-breakpoint
CREATE INDEX `postel_deliveries_endpoint_status` ON `postel_deliveries` (`endpoint_id`,`status`);--> statement-breakpoint
CREATE INDEX `postel_deliveries_lease_token` ON `postel_deliveries` (`lease_token`) WHERE lease_token IS NOT NULL;--> statement-breakpoint
CREATE INDEX `postel_deliveries_dead_letter` ON `postel_deliveries` (`id`) WHERE status = 'dead-lettered';--> statement-breakpoint
CREATE TABLE `postel_endpoint_health` (
	`endpoint_id` text NOT NULL,
	`bucket_start` integer NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`failures` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`endpoint_id`, `bucket_start`)
);
--> statement-breakpoint
CREATE TABLE `postel_endpoint_secrets` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`endpoint_id` text NOT NULL,
	`secret` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer
);
--> statement-breakpoint
CREATE INDEX `postel_endpoint_secrets_endpoint` ON `postel_endpoint_secrets` (`endpoint_id`);--> statement-breakpoint
CREATE TABLE `postel_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`url` text NOT NULL,
	`description` text,
	`types` text NOT NULL,
	`filter` text,
	`filter_fn` text,
	`transform` text,
	`headers` text NOT NULL,
	`retry_policy` text,
	`circuit_breaker` text,
	`auto_disable` text,
	`tenant_id` text,
	`metadata` text NOT NULL,
	`state` text DEFAULT 'active' NOT NULL,
	`circuit_open_until` integer,
	`disabled_reason` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`deleted_at` integer
);
--> statement-breakpoint
CREATE INDEX `postel_endpoints_live` ON `postel_endpoints` (`created_at`,`id`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE TABLE `postel_messages` (
	`id` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`payload` text NOT NULL,
	`tenant_id` text,
	`idempotency_key` text,
	`status` text DEFAULT 'pending' NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer,
	`fanned_out_at` integer,
	`finished_at` integer,
	`lease_token` text,
	`lease_owner` text,
	`lease_until` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `postel_messages_idempotency_key` ON `postel_messages` (`idempotency_key`) WHERE idempotency_key IS NOT NULL;--> statement-breakpoint
CREATE INDEX `postel_messages_unfanned` ON `postel_messages` (`created_at`,`id`) WHERE fanned_out_at IS NULL;--> statement-breakpoint
CREATE INDEX `postel_messages_created` ON `postel_messages` (`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `postel_messages_status_created` ON `postel_messages` (`status`,`created_at`);--> statement-breakpoint
CREATE TABLE `postel_meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `postel_received` (
	`id` text PRIMARY KEY NOT NULL,
	`source` text NOT NULL,
	`received_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `postel_received_expires` ON `postel_received` (`expires_at`);--> statement-breakpoint
CREATE VIEW `postel_dead_letter` AS SELECT d.id AS delivery_id, d.message_id, d.endpoint_id, e.url AS endpoint_url, d.webhook_id, m.type, m.payload, m.tenant_id, d.retries_used, d.attempts_made, d.last_error, d.next_attempt_at, m.created_at AS message_created_at, d.created_at AS delivery_created_at, d.updated_at AS dead_lettered_at FROM postel_deliveries d JOIN postel_messages m ON m.id = d.message_id LEFT JOIN postel_endpoints e ON e.id = d.endpoint_id WHERE d.status = 'dead-lettered';