import { runStorageConformance } from "@postel/core/testing";
import type { Sql } from "postgres";
import { afterAll, beforeAll } from "vitest";
import { migrate, PostgresStorage } from "../src/index.js";
import { createTestDatabase, type TestDatabase, truncatePostel } from "./support/database.js";

// One database per file, migrated once; each test starts from empty tables on a shared pool.
let database: TestDatabase;
let sql: Sql;

beforeAll(async () => {
  database = await createTestDatabase();
  sql = database.connect();
  await migrate(sql);
});
afterAll(() => database.drop());

runStorageConformance({
  name: "postgres",
  create: async () => {
    await truncatePostel(sql);
    return PostgresStorage({ sql }, { migrate: false });
  },
  transaction: async (_storage, fn) => {
    // sql.begin's result type unwraps arrays of promises; keep fn's own result type instead.
    let result: Awaited<ReturnType<typeof fn>> | undefined;
    await sql.begin(async (tx) => {
      result = await fn(tx);
    });
    return result as Awaited<ReturnType<typeof fn>>;
  },
});
