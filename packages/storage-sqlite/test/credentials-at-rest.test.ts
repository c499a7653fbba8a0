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
    // The WAL first, the database after: a WAL that disappears meanwhile (the last connection's
    // checkpoint deletes it) had its pages copied into the database file before it went.
    const optional = async (file: string) =>
      readFile(file).catch((error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") return Buffer.alloc(0);
        throw error;
      });
    const logs = await Promise.all([optional(`${path}-wal`), optional(`${path}-shm`)]);
    return Buffer.concat([await readFile(path), ...logs]);
  },
  destroy: async (storage) => {
    await storage.close();
    files.get(storage)?.remove();
  },
});
