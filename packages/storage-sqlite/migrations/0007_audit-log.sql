CREATE TABLE `postel_audit_log` (
	`id` text PRIMARY KEY NOT NULL,
	`at` integer NOT NULL,
	`tenant_id` text,
	`actor` text NOT NULL,
	`action` text NOT NULL,
	`target` text,
	`source` text NOT NULL,
	`detail` text,
	`key` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `postel_audit_log_key` ON `postel_audit_log` (`key`) WHERE key IS NOT NULL;--> statement-breakpoint
CREATE INDEX `postel_audit_log_tenant` ON `postel_audit_log` (`tenant_id`,`id`);--> statement-breakpoint
CREATE INDEX `postel_audit_log_tenant_action_at` ON `postel_audit_log` (`tenant_id`,`action`,`at`);--> statement-breakpoint
CREATE INDEX `postel_audit_log_at` ON `postel_audit_log` (`at`);