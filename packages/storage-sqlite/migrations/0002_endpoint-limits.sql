ALTER TABLE `postel_endpoints` ADD `max_in_flight` integer;--> statement-breakpoint
ALTER TABLE `postel_endpoints` ADD `rate_limit` real;