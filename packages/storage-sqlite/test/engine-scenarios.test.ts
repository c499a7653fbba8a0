import { runEngineScenarios } from "@postel/core/testing";
import { SqliteStorage } from "../src/index.js";
import { tempDatabase } from "./temp-db.js";

const files = new WeakMap<SqliteStorage, () => void>();

runEngineScenarios({
  name: "sqlite",
  create: async () => {
    const db = tempDatabase();
    const storage = SqliteStorage({ url: db.url });
    await storage.migrate();
    files.set(storage, db.remove);
    return storage;
  },
  // The test's Postel closes the storage again afterwards; closing twice is harmless.
  destroy: async (storage) => {
    await storage.close();
    files.get(storage)?.();
  },
});
