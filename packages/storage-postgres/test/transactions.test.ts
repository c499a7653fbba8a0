import { drizzle } from "drizzle-orm/postgres-js";
import type { Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { migrate, PostgresStorage, type PostgresStorageInstance } from "../src/index.js";
import * as schema from "../src/schema.js";
import { createTestDatabase, type TestDatabase } from "./support/database.js";
import { newMessage } from "./support/messages.js";

let database: TestDatabase;
let sql: Sql;
let storage: PostgresStorageInstance;

beforeAll(async () => {
  database = await createTestDatabase();
  sql = database.connect();
  await migrate(sql);
  storage = PostgresStorage({ sql });
});
afterAll(() => database.drop());

class Abort extends Error {}

describe("send(event, { tx }) with a postgres.js sql.begin handle", () => {
  test("a transaction that throws leaves no message", async () => {
    const message = newMessage();
    await expect(
      sql.begin(async (tx) => {
        await storage.enqueue(message, { tx });
        throw new Abort("business write failed");
      }),
    ).rejects.toBeInstanceOf(Abort);
    expect(await storage.getMessage(message.id)).toBeNull();
  });

  test("a transaction that commits leaves the message, invisible to others until then", async () => {
    const message = newMessage();
    await sql.begin(async (tx) => {
      await storage.enqueue(message, { tx });
      expect(await storage.getMessage(message.id)).toBeNull();
    });
    expect(await storage.getMessage(message.id)).toMatchObject({ id: message.id, status: "pending" });
  });
});

describe("send(event, { tx }) with a drizzle transaction", () => {
  const db = () => drizzle(sql, { schema });

  test("a transaction that throws leaves no message", async () => {
    const message = newMessage();
    await expect(
      db().transaction(async (tx) => {
        await storage.enqueue(message, { tx });
        throw new Abort("business write failed");
      }),
    ).rejects.toBeInstanceOf(Abort);
    expect(await storage.getMessage(message.id)).toBeNull();
  });

  test("tx.rollback() leaves no message", async () => {
    const message = newMessage();
    await expect(
      db().transaction(async (tx) => {
        await storage.enqueue(message, { tx });
        tx.rollback();
      }),
    ).rejects.toThrow();
    expect(await storage.getMessage(message.id)).toBeNull();
  });

  test("a transaction that commits leaves the message", async () => {
    const message = newMessage();
    await db().transaction(async (tx) => {
      await storage.enqueue(message, { tx });
    });
    expect(await storage.getMessage(message.id)).toMatchObject({ id: message.id, status: "pending" });
  });

  test("a storage built on a drizzle db shares its pool and close() leaves it open", async () => {
    const shared = PostgresStorage({ db: drizzle(sql) });
    const message = newMessage();
    await shared.enqueue(message);
    await shared.close();
    expect(await sql`SELECT 1 AS one`).toEqual([{ one: 1 }]);
    expect(await storage.getMessage(message.id)).not.toBeNull();
  });
});
