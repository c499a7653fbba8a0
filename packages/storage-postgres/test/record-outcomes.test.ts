import { afterAll, beforeAll, expect, test } from "vitest";
import { migrate, PostgresStorage, type PostgresStorageInstance } from "../src/index.js";
import { createTestDatabase, type TestDatabase } from "./support/database.js";
import { newMessage } from "./support/messages.js";

const NOW = Date.UTC(2026, 0, 1);
let database: TestDatabase;
let workers: PostgresStorageInstance[];

beforeAll(async () => {
  database = await createTestDatabase();
  await migrate(database.connect());
  workers = [0, 1].map(() => PostgresStorage({ sql: database.connect() }, { migrate: false }));
});
afterAll(() => database.drop());

// The last two deliveries of a message finishing at the same time on two connections: each statement
// alone would see the other delivery still pending; locking the message first makes the second see both.
test("two workers finishing a message's last deliveries concurrently always finalise it", async () => {
  const [a, b] = workers as [PostgresStorageInstance, PostgresStorageInstance];
  for (let round = 0; round < 20; round++) {
    const message = newMessage({ createdAt: NOW });
    await a.enqueue(message);
    const [claimed] = await a.claimFanout({ owner: "a", now: NOW, until: NOW + 60_000, limit: 1 });
    const deliveries = ["ep_1", "ep_2"].map((endpointId) => ({
      id: `${message.id}_${endpointId}`,
      messageId: message.id,
      endpointId,
      webhookId: `wh_${message.id}_${endpointId}`,
      createdAt: NOW,
    }));
    await a.recordFanout([{ messageId: message.id, token: claimed!.token, deliveries }], NOW);
    const [first] = await a.claimDue({ owner: "a", now: NOW, until: NOW + 60_000, limit: 1 });
    const [second] = await b.claimDue({ owner: "b", now: NOW, until: NOW + 60_000, limit: 1 });
    const succeed = (worker: PostgresStorageInstance, lease: NonNullable<typeof first>) =>
      worker.recordOutcomes(
        [{ deliveryId: lease.delivery.id, leaseToken: lease.leaseToken, transition: { kind: "succeeded" } }],
        NOW + 1,
      );
    await Promise.all([succeed(a, first!), succeed(b, second!)]);
    expect(await a.getMessage(message.id)).toMatchObject({ status: "dispatched", finishedAt: NOW + 1 });
  }
});

// A fan-out to N endpoints returns N claimed deliveries; the payload comes back once per message and
// every delivery of that message carries the same full record.
test("a leased fan-out returns each delivery with its whole message, read once per message", async () => {
  const [a] = workers as [PostgresStorageInstance];
  const messages = [1, 2].map((n) =>
    newMessage({ createdAt: NOW, payload: JSON.stringify({ n, text: "x".repeat(10_000) }) }),
  );
  for (const message of messages) await a.enqueue(message);
  const claimed = await a.claimFanout({ owner: "a", now: NOW, until: NOW + 60_000, limit: 10 });
  const mine = claimed.filter((c) => messages.some((m) => m.id === c.message.id));
  expect(mine).toHaveLength(2);
  const results = mine.map(({ message, token }) => ({
    messageId: message.id,
    token,
    deliveries: ["ep_1", "ep_2", "ep_3"].map((endpointId) => ({
      id: `${message.id}_${endpointId}`,
      messageId: message.id,
      endpointId,
      webhookId: message.id,
      createdAt: NOW,
    })),
  }));
  const leased = await a.recordFanout(results, NOW + 1, { owner: "a", until: NOW + 60_000 });
  expect(leased).toHaveLength(6);
  for (const message of messages) {
    const stored = await a.getMessage(message.id);
    expect(stored).toMatchObject({ payload: message.payload, fannedOutAt: NOW + 1 });
    const ofMessage = leased.filter((c) => c.delivery.messageId === message.id);
    expect(ofMessage.map((c) => c.delivery.endpointId).sort()).toEqual(["ep_1", "ep_2", "ep_3"]);
    for (const c of ofMessage) {
      expect(c.message).toEqual(stored);
      expect(c.message).toBe(ofMessage[0]!.message);
      expect(c.leaseToken).toBe(c.delivery.leaseToken);
    }
  }
});
