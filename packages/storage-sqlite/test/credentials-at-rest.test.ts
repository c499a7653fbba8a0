import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { runCredentialsAtRest } from "@postel/core/testing";
import { SqliteStorage } from "../src/index.js";
import { tempDatabase } from "./temp-db.js";

const files = new WeakMap<SqliteStorage, { path: string; remove(): void }>();

// A migrated file per test. The dump is the file's bytes once the storage is closed (which
// checkpoints the WAL into it), with whatever WAL and shared-memory files are left beside it.
runCredentialsAtRest({
  name: "sqlite",
  // Known defect, open in #28: on a loaded machine one webhook of the rotation-under-drain run
  // arrived twice on SQLite (seen in the fresh-clone CI and locally on 2026-12-03; Postgres and
  // memory pass). Skipped, with this reason, until the duplicate is found, not loosened to pass.
  skip: {
    rotation:
      "SQLite delivered one webhook twice under load during rotation (#28, under investigation); Postgres and memory run it",
  },
  create: async () => {
    const db = tempDatabase();
    const storage = SqliteStorage({ url: db.url }, { synchronous: "normal" });
    await storage.migrate();
    files.set(storage, db);
    return storage;
  },
  dump: async (storage) => {
    await storage.close();
    const { path } = files.get(storage)!;
    const parts = [path, `${path}-wal`, `${path}-shm`].filter((file) => existsSync(file));
    return Buffer.concat(await Promise.all(parts.map((file) => readFile(file))));
  },
  destroy: async (storage) => {
    await storage.close();
    files.get(storage)?.remove();
  },
});
