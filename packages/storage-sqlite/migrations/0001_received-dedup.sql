-- Inbound dedup: one record per (source, webhook id), in state processing or done. SQLite cannot
-- change a primary key in place, so the table is rebuilt; existing records were handled ones (done).
-- Hand-edited from drizzle-kit's output: no foreign key points at this table, so its
-- PRAGMA foreign_keys toggles (a no-op inside the migration's transaction anyway) are left out.
CREATE TABLE `__new_postel_received` (
	`source` text NOT NULL,
	`id` text NOT NULL,
	`status` text NOT NULL,
	`received_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`source`, `id`)
);
--> statement-breakpoint
INSERT INTO `__new_postel_received`("source", "id", "status", "received_at", "expires_at") SELECT "source", "id", 'done', "received_at", "expires_at" FROM `postel_received`;--> statement-breakpoint
DROP TABLE `postel_received`;--> statement-breakpoint
ALTER TABLE `__new_postel_received` RENAME TO `postel_received`;--> statement-breakpoint
CREATE INDEX `postel_received_expires` ON `postel_received` (`expires_at`);
