import { type Client, createClient } from "@libsql/client";
import type { NewMessage } from "@postel/core/storage";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/libsql";
import { sql as previousSql } from "drizzle-orm-previous";
import { drizzle as previousDrizzle } from "drizzle-orm-previous/libsql";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { SqliteStorage } from "../src/index.js";
import { tempDatabase } from "./temp-db.js";

let file: ReturnType<typeof tempDatabase>;
let client: Client;
let sequence = 0;

beforeEach(async () => {
  file = tempDatabase();
  client = createClient({ url: file.url });
  await client.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER NOT NULL)");
});
afterEach(() => {
  client.close();
  file.remove();
});

function message(overrides: Partial<NewMessage> = {}): NewMessage {
  sequence += 1;
  return {
    id: `msg_${sequence}`,
    type: "order.created",
    payload: JSON.stringify({ order: sequence }),
    tenantId: null,
    idempotencyKey: null,
    createdAt: Date.UTC(2026, 0, 1),
    expiresAt: null,
    ...overrides,
  };
}

async function orders(): Promise<number> {
  return Number((await client.execute("SELECT count(*) AS n FROM orders")).rows[0]?.["n"]);
}

describe("send(event, { tx }) with a libsql transaction", () => {
  test("a rolled-back transaction leaves neither the business row nor the message", async () => {
    const storage = SqliteStorage({ client });
    await storage.migrate();
    const m = message();
    const tx = await client.transaction("write");
    await tx.execute("INSERT INTO orders (total) VALUES (1250)");
    expect(await storage.enqueue(m, { tx })).toEqual({ id: m.id, reused: false });
    await tx.rollback();
    expect(await storage.getMessage(m.id)).toBeNull();
    expect(await orders()).toBe(0);
  });

  test("a committed transaction makes the business row and the message visible together", async () => {
    const storage = SqliteStorage({ client });
    await storage.migrate();
    const m = message({ idempotencyKey: "order-1" });
    const tx = await client.transaction("write");
    await tx.execute("INSERT INTO orders (total) VALUES (1250)");
    await storage.enqueue(m, { tx });
    await tx.commit();
    expect((await storage.getMessage(m.id))?.status).toBe("pending");
    expect(await orders()).toBe(1);
    // The key now belongs to the committed message, inside or outside a transaction.
    const again = await client.transaction("write");
    expect(await storage.enqueue(message({ idempotencyKey: "order-1" }), { tx: again })).toEqual({
      id: m.id,
      reused: true,
    });
    await again.commit();
  });
});

// drizzle-orm is an optional peer: the app's drizzle is used, whichever minor it is.
describe("send(event, { tx }) with a transaction of the previous drizzle minor (0.44)", () => {
  test("a rolled-back transaction leaves no message; a committed one leaves it with the business write", async () => {
    const db = previousDrizzle(client);
    const storage = SqliteStorage({ client });
    await storage.migrate();
    const dropped = message();
    await expect(
      db.transaction(async (tx) => {
        await tx.run(previousSql`INSERT INTO orders (total) VALUES (990)`);
        await storage.enqueue(dropped, { tx });
        throw new Error("payment declined");
      }),
    ).rejects.toThrow("payment declined");
    expect(await storage.getMessage(dropped.id)).toBeNull();
    const kept = message({ idempotencyKey: "order-previous" });
    await db.transaction(async (tx) => {
      await tx.run(previousSql`INSERT INTO orders (total) VALUES (990)`);
      await storage.enqueue(kept, { tx });
    });
    expect(await storage.getMessage(kept.id)).toMatchObject({ idempotencyKey: "order-previous" });
    expect(await orders()).toBe(1);
    await storage.close();
  });
});

describe("send(event, { tx }) with a drizzle transaction", () => {
  test("throwing inside db.transaction rolls the message back with the business write", async () => {
    const db = drizzle(client);
    const storage = SqliteStorage({ db });
    await storage.migrate();
    const m = message();
    await expect(
      db.transaction(async (tx) => {
        await tx.run(sql`INSERT INTO orders (total) VALUES (990)`);
        await storage.enqueue(m, { tx });
        throw new Error("payment declined");
      }),
    ).rejects.toThrow("payment declined");
    expect(await storage.getMessage(m.id)).toBeNull();
    expect(await orders()).toBe(0);
  });

  test("a drizzle transaction that resolves commits the message with the business write", async () => {
    const db = drizzle(client);
    const storage = SqliteStorage({ db });
    await storage.migrate();
    const m = message({ idempotencyKey: "order-2" });
    const result = await db.transaction(async (tx) => {
      await tx.run(sql`INSERT INTO orders (total) VALUES (990)`);
      return storage.enqueue(m, { tx });
    });
    expect(result).toEqual({ id: m.id, reused: false });
    expect((await storage.getMessage(m.id))?.idempotencyKey).toBe("order-2");
    expect(await orders()).toBe(1);
    const reused = await db.transaction((tx) =>
      storage.enqueue(message({ idempotencyKey: "order-2" }), { tx }),
    );
    expect(reused).toEqual({ id: m.id, reused: true });
    // The storage shares drizzle's client: closing it leaves the client usable.
    await storage.close();
    expect(await orders()).toBe(1);
  });

  test("enqueue on a transaction before migrate() fails with SCHEMA_MISMATCH instead of migrating inside it", async () => {
    const db = drizzle(client);
    const storage = SqliteStorage({ db });
    await expect(db.transaction((tx) => storage.enqueue(message(), { tx }))).rejects.toMatchObject({
      code: "SCHEMA_MISMATCH",
    });
  });
});
