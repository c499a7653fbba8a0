CREATE TABLE `postel_held_keys` (
	`endpoint_id` text NOT NULL,
	`ordering_key` text NOT NULL,
	`delivery_id` text NOT NULL,
	`held_at` integer NOT NULL,
	PRIMARY KEY(`endpoint_id`, `ordering_key`)
);
--> statement-breakpoint
CREATE INDEX `postel_held_keys_delivery` ON `postel_held_keys` (`delivery_id`);--> statement-breakpoint
ALTER TABLE `postel_deliveries` ADD `ordering_key` text;--> statement-breakpoint
CREATE INDEX `postel_deliveries_key_open` ON `postel_deliveries` (`endpoint_id`,`ordering_key`,`status`,`message_id`) WHERE ordering_key IS NOT NULL AND status IN ('pending', 'held', 'waiting');--> statement-breakpoint
ALTER TABLE `postel_endpoints` ADD `on_key_failure` text DEFAULT 'skip' NOT NULL;--> statement-breakpoint
ALTER TABLE `postel_messages` ADD `ordering_key` text;--> statement-breakpoint
CREATE INDEX `postel_messages_unfanned_key` ON `postel_messages` (`ordering_key`,`id`) WHERE ordering_key IS NOT NULL AND fanned_out_at IS NULL AND status = 'pending';