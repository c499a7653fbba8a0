import type { Command } from "../command.js";

const command: Command = {
  name: "migrate",
  summary: "Create or upgrade Postel's tables (a new SQLite file is created)",
  options: {},
  details: [
    "Safe to run from several processes at once, and again: it applies only what is missing.",
    "JSON: { migrated: true, database }.",
  ],
  async run({ args, out, open }) {
    args.expectPositionals(0);
    const db = await open({ create: true });
    await db.storage.migrate();
    if (out.json) return out.data({ migrated: true, database: db.target.display });
    out.text(`Migrated ${db.target.display}: Postel's schema is up to date.`);
  },
};

/** `migrate`. */
export const migrateCommands: Command[] = [command];
