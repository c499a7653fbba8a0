import { SqliteStorage, type SqliteTransaction } from "../src/index.js";
import { tempDatabase } from "./temp-db.js";

const files = new WeakMap<SqliteStorage, () => void>();

/**
 * How the shared suites (conformance, engine scenarios, input properties) make and drop a SQLite
 * storage: a migrated file of its own each time, removed afterwards.
 */
export const sqliteHooks = {
  name: "sqlite",
  create: async (): Promise<SqliteStorage> => {
    const db = tempDatabase();
    const storage = SqliteStorage({ url: db.url });
    await storage.migrate();
    files.set(storage, db.remove);
    return storage;
  },
  // Suites may close the storage again afterwards; closing twice is harmless, and the WAL files go
  // with the directory either way.
  destroy: async (storage: SqliteStorage): Promise<void> => {
    await storage.close();
    files.get(storage)?.();
  },
  /** Runs `fn` in a write transaction, committed when it returns and rolled back when it throws. */
  transaction: async <T>(storage: SqliteStorage, fn: (tx: SqliteTransaction) => Promise<T>): Promise<T> => {
    const tx = await storage.client.transaction("write");
    try {
      const result = await fn(tx);
      await tx.commit();
      return result;
    } finally {
      tx.close(); // rolls back unless committed
    }
  },
};
