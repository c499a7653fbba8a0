import postgres, { type Sql } from "postgres";
import { afterAll, afterEach, beforeAll, expect, test } from "vitest";
import { begin } from "../src/internal/begin.js";
import { pipelinedTransaction } from "../src/internal/pipelined-transaction.js";
import { createTestDatabase, type TestDatabase } from "./support/database.js";

// A transaction whose session the server ends half-way (a failover, a restart, pg_terminate_backend)
// fails, and the process lives on. postgres.js 3.4.9's sql.begin sends ROLLBACK after its callback
// fails, also when it failed because the connection closed: the write to the closed connection throws
// from a setImmediate, an uncaught exception that ends a Node process (Vitest reports it as an error).

let database: TestDatabase;
let admin: Sql;
const uncaught: unknown[] = [];
const record = (error: unknown) => uncaught.push(error);

beforeAll(async () => {
  database = await createTestDatabase();
  admin = postgres(database.url, { max: 1, onnotice: () => {} });
  process.on("uncaughtExceptionMonitor", record);
});
afterAll(async () => {
  process.off("uncaughtExceptionMonitor", record);
  await admin.end({ timeout: 1 });
  await database.drop();
});
afterEach(() => {
  uncaught.length = 0;
});

/** Ends the sessions named `name` once one of them runs pg_sleep, and returns how many it ended. */
async function terminateWhileSleeping(name: string): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const [row] = await admin<{ n: number }[]>`
      SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
      WHERE application_name = ${name} AND query LIKE '%pg_sleep%' AND state = 'active'`;
    if (row!.n > 0) return row!.n;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return 0;
}

/** Lets every pending immediate and timer run: the crash came from a setImmediate. */
async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 300));
}

test("a pipelined transaction whose session is ended mid-way rejects with the loss, and nothing throws later", async () => {
  const sql = database.connect({ connection: { application_name: "lost-pipelined" } });
  const running = pipelinedTransaction(sql, (tx) => [tx`SELECT pg_sleep(5)`, tx`SELECT 1 AS one`]).catch(
    (error: unknown) => error,
  );
  expect(await terminateWhileSleeping("lost-pipelined")).toBe(1);
  expect(await running).toMatchObject({ code: expect.stringMatching(/^CONNECTION_|^57P01$/) });
  await settle();
  expect(uncaught).toEqual([]);
  // The pool opens a new connection and goes on.
  const [result] = await pipelinedTransaction(sql, (tx) => [tx`SELECT 2 AS two`]);
  expect(result?.[0]).toEqual({ two: 2 });
});

test("a transaction of awaited statements whose session is ended mid-way rejects, and nothing throws later", async () => {
  const sql = database.connect({ connection: { application_name: "lost-awaited" } });
  const running = begin(sql, async (tx) => {
    await tx`SELECT 1`;
    return tx`SELECT pg_sleep(5)`;
  }).catch((error: unknown) => error);
  expect(await terminateWhileSleeping("lost-awaited")).toBe(1);
  expect(await running).toMatchObject({ code: expect.stringMatching(/^CONNECTION_|^57P01$/) });
  await settle();
  expect(uncaught).toEqual([]);
});

test("any other failure in a transaction rolls it back and rejects with that error", async () => {
  const sql = database.connect();
  await sql`CREATE TABLE IF NOT EXISTS rolled_back (n int PRIMARY KEY)`;
  const failed = await begin(sql, async (tx) => {
    await tx`INSERT INTO rolled_back VALUES (1)`;
    await tx`INSERT INTO rolled_back VALUES (1)`;
  }).catch((error: unknown) => error);
  expect(failed).toMatchObject({ code: "23505" });
  expect(await sql`SELECT n FROM rolled_back`).toHaveLength(0);
  // The connection is healthy after the ROLLBACK.
  expect(await begin(sql, async (tx) => tx`SELECT 3 AS three`)).toEqual([{ three: 3 }]);
});
