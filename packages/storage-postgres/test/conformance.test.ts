import { runStorageConformance } from "@postel/core/testing";
import { PostgresStorage } from "../src/index.js";
import { migratedDatabase, truncatePostel } from "./support/database.js";

// One database per file, migrated once; each test starts from empty tables on a shared pool.
const db = migratedDatabase();

runStorageConformance({
  name: "postgres",
  create: async () => {
    await truncatePostel(db.sql);
    return PostgresStorage({ sql: db.sql }, { migrate: false });
  },
  transaction: async (_storage, fn) => {
    // sql.begin's result type unwraps arrays of promises; keep fn's own result type instead.
    let result: Awaited<ReturnType<typeof fn>> | undefined;
    await db.sql.begin(async (tx) => {
      result = await fn(tx);
    });
    return result as Awaited<ReturnType<typeof fn>>;
  },
});
