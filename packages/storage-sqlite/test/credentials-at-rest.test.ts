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
