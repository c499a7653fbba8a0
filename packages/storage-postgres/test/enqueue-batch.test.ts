import { InvalidInputError } from "@postel/core";
import { drizzle } from "drizzle-orm/postgres-js";
import type { Sql } from "postgres";
import { afterAll, beforeAll, beforeEach, expect, test } from "vitest";
import { migrate, PostgresStorage, type PostgresStorageInstance } from "../src/index.js";
import { createTestDatabase, type TestDatabase, truncatePostel } from "./support/database.js";
import { newMessage } from "./support/messages.js";

// Enqueues made without a transaction in the same turn of the event loop share one INSERT; each
// caller must still get exactly the answer it would have had alone.
let database: TestDatabase;
let sql: Sql;
let storage: PostgresStorageInstance;

beforeAll(async () => {
  database = await createTestDatabase();
  sql = database.connect();
  await migrate(sql);
  storage = PostgresStorage({ sql }, { migrate: false });
});
beforeEach(() => truncatePostel(sql));
afterAll(() => database.drop());

test("1,000 concurrent enqueues all land, each once, in a handful of statements", async () => {
  let statements = 0;
  const counted = PostgresStorage(
    { sql: database.connect({ debug: () => (statements += 1) }) },
    { migrate: false },
  );
  const messages = Array.from({ length: 1_000 }, () => newMessage());
  const results = await Promise.all(messages.map((message) => counted.enqueue(message)));
  expect(results).toEqual(messages.map((message) => ({ id: message.id, reused: false })));
  const [row] = await sql<{ count: string }[]>`SELECT count(*) FROM postel.messages`;
  expect(Number(row?.count)).toBe(1_000);
  // Batches of at most 250 rows (plus the schema check on first use), not 1,000 INSERTs.
  expect(statements).toBeLessThanOrEqual(10);
});

test("concurrent enqueues with idempotency keys keep their meaning beside a batch", async () => {
  const earlier = await storage.enqueue(newMessage({ idempotencyKey: "order-1" }));
  const batch = [
    newMessage({ idempotencyKey: "order-1" }),
    newMessage({ idempotencyKey: "order-2" }),
    newMessage({ idempotencyKey: "order-2" }),
    newMessage(),
  ];
  const results = await Promise.all(batch.map((message) => storage.enqueue(message)));
  expect(results[0]).toEqual({ id: earlier.id, reused: true });
  // The two "order-2" sends race on separate connections: either may win, and the other reuses it.
  const winner = results[1]!.reused ? results[2]! : results[1]!;
  expect([batch[1]!.id, batch[2]!.id]).toContain(winner.id);
  expect([results[1], results[2]].map((r) => r!.reused).sort()).toEqual([false, true]);
  expect(results[1]!.id).toBe(results[2]!.id);
  expect(results[3]).toEqual({ id: batch[3]!.id, reused: false });
  const rows = await sql<{ id: string }[]>`SELECT id FROM postel.messages ORDER BY id`;
  expect(rows.map((r) => r.id).sort()).toEqual([earlier.id, winner.id, batch[3]!.id].sort());
});

test("a duplicate id fails only its own enqueue; the rest of the batch lands", async () => {
  const taken = newMessage();
  await storage.enqueue(taken);
  const others = [newMessage(), newMessage()];
  const results = await Promise.allSettled([
    storage.enqueue(others[0]!),
    storage.enqueue({ ...newMessage(), id: taken.id }),
    storage.enqueue(others[1]!),
  ]);
  expect(results[0]).toEqual({ status: "fulfilled", value: { id: others[0]!.id, reused: false } });
  expect(results[1]?.status).toBe("rejected");
  expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(InvalidInputError);
  expect(results[2]).toEqual({ status: "fulfilled", value: { id: others[1]!.id, reused: false } });
});

test("a test event batched beside other sends keeps its endpoint; the others have none", async () => {
  // sendTest() enqueues without a transaction: beside concurrent sends, its row goes in their INSERT.
  const probe = newMessage({ testEndpointId: "ep_test_batched" });
  const plain = [newMessage(), newMessage()];
  await Promise.all([plain[0]!, probe, plain[1]!].map((message) => storage.enqueue(message)));
  expect((await storage.getMessage(probe.id))?.testEndpointId).toBe("ep_test_batched");
  for (const message of plain) {
    expect(await storage.getMessage(message.id)).not.toHaveProperty("testEndpointId");
  }
  const many = [newMessage(), newMessage({ testEndpointId: "ep_test_many" })];
  await storage.batchSend.enqueueMany(many);
  expect(await storage.getMessage(many[0]!.id)).not.toHaveProperty("testEndpointId");
  expect((await storage.getMessage(many[1]!.id))?.testEndpointId).toBe("ep_test_many");
});

test("a batch wakes subscribers once it is committed", async () => {
  let wakes = 0;
  const unsubscribe = await storage.subscribe!(() => {
    wakes += 1;
  });
  await Promise.all(Array.from({ length: 50 }, () => storage.enqueue(newMessage())));
  const deadline = Date.now() + 5_000;
  while (wakes === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(wakes).toBeGreaterThanOrEqual(1);
  await unsubscribe();
});

// enqueueMany (sendBatch) beyond the conformance suite: a drizzle transaction, odd text, few statements.
const odd = ['{"q":"\\"quoted\\" {braces} ,commas, \\\\back\\\\slash"}', '"NULL"', "null", '"😀 é"'];

test("a batch in a drizzle transaction commits with it, text and nulls kept exactly", async () => {
  const batch = odd.map((payload, i) =>
    newMessage({ payload, tenantId: i % 2 ? null : "NULL", idempotencyKey: i === 0 ? null : `k{${i}}` }),
  );
  await drizzle(sql).transaction(async (tx) => {
    expect(await storage.batchSend.enqueueMany(batch, { tx })).toEqual(
      batch.map((m) => ({ id: m.id, reused: false })),
    );
  });
  for (const message of batch) {
    expect(await storage.getMessage(message.id)).toMatchObject({
      payload: message.payload,
      tenantId: message.tenantId,
      idempotencyKey: message.idempotencyKey,
    });
  }
});

test("a batch keeps backslashes and control characters exactly, keyed or not", async () => {
  // Text columns go as array literals written by JSON.stringify, except one holding a character that
  // JSON escapes differently (a newline, a tab): such a column goes as an array, for postgres.js.
  const payloads = ['"C:\\\\new \\\\\\"quoted\\\\\\" \\t"', '{"line":"a\\nb","tab":"\\t","u":"\\u0000"}'];
  const keys = ["plain", "line\nbreak\ttab\\n"];
  const unkeyed = payloads.map((payload, i) => newMessage({ payload, tenantId: keys[i]! }));
  const keyed = payloads.map((payload, i) => newMessage({ payload, idempotencyKey: keys[i]! }));
  for (const batch of [unkeyed, keyed]) {
    expect(await storage.batchSend.enqueueMany(batch)).toEqual(
      batch.map((m) => ({ id: m.id, reused: false })),
    );
  }
  for (const message of [...unkeyed, ...keyed]) {
    expect(await storage.getMessage(message.id)).toMatchObject({
      payload: message.payload,
      tenantId: message.tenantId,
      idempotencyKey: message.idempotencyKey,
    });
  }
});

test("a batch in a drizzle transaction that throws writes nothing", async () => {
  await expect(
    drizzle(sql).transaction(async (tx) => {
      await storage.batchSend.enqueueMany([newMessage(), newMessage({ idempotencyKey: "k" })], { tx });
      throw new Error("rollback");
    }),
  ).rejects.toThrow("rollback");
  expect(await storage.operations.listMessages({ limit: 10 })).toEqual([]);
});

test("a batch of 1,000 is one INSERT, 10,000 are BEGIN, two INSERTs and COMMIT; one NOTIFY wakes a subscriber", async () => {
  let statements = 0;
  const counted = PostgresStorage(
    { sql: database.connect({ debug: () => (statements += 1) }) },
    { migrate: false },
  );
  await counted.batchSend.enqueueMany([newMessage()]); // the schema check on first use
  let wakes = 0;
  const unsubscribe = await storage.subscribe!(() => {
    wakes += 1;
  });
  statements = 0;
  expect(await counted.batchSend.enqueueMany(Array.from({ length: 1_000 }, () => newMessage()))).toHaveLength(
    1_000,
  );
  expect(statements).toBe(1);
  statements = 0;
  const batch = Array.from({ length: 10_000 }, () => newMessage());
  expect(await counted.batchSend.enqueueMany(batch)).toHaveLength(10_000);
  expect(statements).toBe(4);
  const deadline = Date.now() + 5_000;
  while (wakes === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(wakes).toBe(2);
  await unsubscribe();
});
