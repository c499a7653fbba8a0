CREATE TABLE `postel_endpoint_rate_buckets` (
	`endpoint_id` text PRIMARY KEY NOT NULL,
	`tokens` real NOT NULL,
	`refilled_at` integer NOT NULL
);
--> statement-breakpoint
DROP INDEX `postel_deliveries_endpoint_status`;--> statement-breakpoint
CREATE INDEX `postel_deliveries_endpoint_due` ON `postel_deliveries` (`endpoint_id`,`status`,`next_attempt_at`);