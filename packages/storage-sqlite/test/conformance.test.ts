import { runStorageConformance } from "@postel/core/testing";
import { SqliteStorage } from "../src/index.js";
import { tempDatabase } from "./temp-db.js";

const files = new WeakMap<SqliteStorage, () => void>();

runStorageConformance({
  name: "sqlite",
  create: async () => {
    const db = tempDatabase();
    const storage = SqliteStorage({ url: db.url });
    await storage.migrate();
    files.set(storage, db.remove);
    return storage;
  },
  // close() runs after destroy; the WAL files go with the directory either way.
  destroy: async (storage) => {
    await storage.close();
    files.get(storage)?.();
  },
  transaction: async (storage, fn) => {
    const tx = await storage.client.transaction("write");
    try {
      const result = await fn(tx);
      await tx.commit();
      return result;
    } finally {
      tx.close(); // rolls back unless committed
    }
  },
});
