CREATE TABLE `postel_endpoint_rate_buckets` (
	`endpoint_id` text PRIMARY KEY NOT NULL,
	`tokens` real NOT NULL,
	`refilled_at` integer NOT NULL
);
