import { drizzle as currentNodePostgres } from "drizzle-orm/node-postgres";
import { drizzle as currentPostgresJs } from "drizzle-orm/postgres-js";
import { drizzle as previousNodePostgres } from "drizzle-orm-previous/node-postgres";
import { drizzle as previousPostgresJs } from "drizzle-orm-previous/postgres-js";
import pg from "pg";
import type { Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  migrate,
  PostgresStorage,
  type PostgresStorageInstance,
  type PostgresTransaction,
} from "../src/index.js";
import { createTestDatabase, type TestDatabase } from "./support/database.js";
import { newMessage } from "./support/messages.js";

// drizzle-orm is an optional peer: the app's drizzle is the one used, whichever minor it is. Its
// transactions join `send(event, { tx })` in the current minor (0.45) and the previous one (0.44), on
// both drivers; this file also type-checks them against `PostgresTransaction`.

let database: TestDatabase;
let sql: Sql;
let pool: pg.Pool;
let storage: PostgresStorageInstance;

beforeAll(async () => {
  database = await createTestDatabase();
  sql = database.connect();
  await migrate(sql);
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
  storage = PostgresStorage({ sql }, { migrate: false });
});
afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

class Abort extends Error {}

/** Runs `work` in a transaction of one drizzle version and driver. */
type Transact = (work: (tx: PostgresTransaction) => Promise<void>) => Promise<void>;

const versions: [string, Transact][] = [
  ["0.45 on postgres.js", (work) => currentPostgresJs(sql).transaction((tx) => work(tx))],
  ["0.45 on node-postgres", (work) => currentNodePostgres(pool).transaction((tx) => work(tx))],
  ["0.44 on postgres.js", (work) => previousPostgresJs(sql).transaction((tx) => work(tx))],
  ["0.44 on node-postgres", (work) => previousNodePostgres(pool).transaction((tx) => work(tx))],
];

describe.each(versions)("a drizzle %s transaction", (_, transact) => {
  test("that rolls back leaves no message; one that commits leaves it", async () => {
    const dropped = newMessage();
    await expect(
      transact(async (tx) => {
        await storage.enqueue(dropped, { tx });
        throw new Abort("rolled back");
      }),
    ).rejects.toBeInstanceOf(Abort);
    expect(await storage.getMessage(dropped.id)).toBeNull();

    const kept = newMessage();
    await transact(async (tx) => {
      await storage.enqueue(kept, { tx });
      expect(await storage.getMessage(kept.id)).toBeNull();
    });
    expect(await storage.getMessage(kept.id)).toMatchObject({ id: kept.id, status: "pending" });
  });
});
