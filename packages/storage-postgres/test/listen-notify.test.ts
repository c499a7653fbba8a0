import { afterAll, beforeAll, expect, test } from "vitest";
import { migrate, PostgresStorage, type PostgresStorageInstance } from "../src/index.js";
import { createTestDatabase, type TestDatabase } from "./support/database.js";
import { newMessage, waitFor } from "./support/messages.js";

// Two storages on two pools, as in two processes: one sends, the other listens.
let database: TestDatabase;
let sender: PostgresStorageInstance;
let listener: PostgresStorageInstance;

beforeAll(async () => {
  database = await createTestDatabase();
  await migrate(database.connect());
  sender = PostgresStorage({ sql: database.connect() }, { migrate: false });
  listener = PostgresStorage({ sql: database.connect() }, { migrate: false });
});
afterAll(() => database.drop());

test("a subscriber is woken after a committed enqueue and not by a rolled-back one", async () => {
  let wakes = 0;
  const unsubscribe = await listener.subscribe!(() => {
    wakes += 1;
  });
  const sql = database.connect();

  await sql
    .begin(async (tx) => {
      await sender.enqueue(newMessage(), { tx });
      throw new Error("roll back");
    })
    .catch(() => {});
  await sql.begin(async (tx) => {
    await sender.enqueue(newMessage(), { tx });
    // Nothing is delivered before commit.
    expect(wakes).toBe(0);
  });

  // Notifications arrive in commit order, so had the rolled-back send notified, it would be counted first.
  await waitFor(() => wakes >= 1);
  await sender.enqueue(newMessage());
  await waitFor(() => wakes >= 2);
  expect(wakes).toBe(2);
  await unsubscribe();
});

test("after unsubscribe no more wake-ups arrive", async () => {
  let wakes = 0;
  let control = 0;
  const unsubscribe = await listener.subscribe!(() => {
    wakes += 1;
  });
  const stopControl = await listener.subscribe!(() => {
    control += 1;
  });
  await unsubscribe();
  await sender.enqueue(newMessage());
  await waitFor(() => control >= 1);
  expect(wakes).toBe(0);
  await stopControl();
});

test("an idempotent re-send that inserts nothing wakes nobody", async () => {
  let wakes = 0;
  const unsubscribe = await listener.subscribe!(() => {
    wakes += 1;
  });
  const first = await sender.enqueue(newMessage({ idempotencyKey: "order-7" }));
  await waitFor(() => wakes >= 1);
  const again = await sender.enqueue(newMessage({ idempotencyKey: "order-7" }));
  expect(again).toEqual({ id: first.id, reused: true });
  await sender.enqueue(newMessage());
  await waitFor(() => wakes >= 2);
  expect(wakes).toBe(2);
  await unsubscribe();
});
