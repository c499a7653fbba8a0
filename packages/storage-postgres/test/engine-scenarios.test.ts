import { runEngineScenarios } from "@postel/core/testing";
import { PostgresStorage } from "../src/index.js";
import { migratedDatabase, truncatePostel } from "./support/database.js";

// One database per file, migrated once; each test starts from empty tables on a shared pool.
const db = migratedDatabase();

runEngineScenarios({
  name: "postgres",
  create: async () => {
    await truncatePostel(db.sql);
    return PostgresStorage({ sql: db.sql }, { migrate: false });
  },
});
