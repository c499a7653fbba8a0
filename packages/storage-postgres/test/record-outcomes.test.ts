import type { DeliveryTransition } from "@postel/core/storage";
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

// Migration 0007: a delivery's first attempt lives in its row (no row in `attempts`, no index entries),
// later ones in `attempts`; `all_attempts` and listAttempts read both, and a replay moves the first
// attempt out of the row with the webhook id it was sent under.
test("a delivery's first attempt is kept in its row, later ones in attempts, and a replay moves the first out", async () => {
  const [a] = workers as [PostgresStorageInstance];
  const sql = database.connect();
  const message = newMessage({ createdAt: NOW });
  await a.enqueue(message);
  const [fanout] = await a.claimFanout({ owner: "a", now: NOW, until: NOW + 60_000, limit: 1 });
  const id = `${message.id}_ep`;
  await a.recordFanout(
    [
      {
        messageId: message.id,
        token: fanout!.token,
        deliveries: [
          { id, messageId: message.id, endpointId: "ep_1", webhookId: "wh_first", createdAt: NOW },
        ],
      },
    ],
    NOW,
  );
  const attempt = async (n: number, at: number, transition: DeliveryTransition) => {
    const [claimed] = await a.claimDue({ owner: "a", now: at, until: at + 60_000, limit: 1 });
    expect(claimed!.delivery).toMatchObject({ id, attemptsMade: n - 1 });
    const { delivery } = claimed!;
    await a.recordOutcomes(
      [
        {
          deliveryId: id,
          leaseToken: claimed!.leaseToken,
          transition,
          attempt: {
            id: `att_${n}`,
            deliveryId: id,
            messageId: message.id,
            endpointId: "ep_1",
            webhookId: delivery.webhookId,
            attemptNumber: n,
            startedAt: at,
            latencyMs: 7,
            outcome: n === 1 ? "retryable" : "success",
            statusCode: n === 1 ? 503 : 200,
            errorCode: null,
            error: null,
            responseSnippet: n === 1 ? "busy" : "ok",
          },
        },
      ],
      at,
    );
  };
  await attempt(1, NOW + 1, { kind: "retry", nextAttemptAt: NOW + 2, retriesUsed: 1 });
  await attempt(2, NOW + 2, { kind: "succeeded" });

  const [row] = await sql`
    SELECT first_attempt_id, first_attempt_status_code, first_attempt_response_snippet
    FROM postel.deliveries WHERE id = ${id}`;
  expect(row).toEqual({
    first_attempt_id: "att_1",
    first_attempt_status_code: 503,
    first_attempt_response_snippet: "busy",
  });
  const table = async () =>
    (await sql`SELECT id, webhook_id FROM postel.attempts WHERE delivery_id = ${id} ORDER BY id`).map(
      (r) => ({
        ...r,
      }),
    );
  expect(await table()).toEqual([{ id: "att_2", webhook_id: "wh_first" }]);
  const trail = await a.operations.listAttempts(message.id);
  expect(trail.map((t) => [t.id, t.attemptNumber, t.statusCode, t.webhookId])).toEqual([
    ["att_1", 1, 503, "wh_first"],
    ["att_2", 2, 200, "wh_first"],
  ]);
  const [view] = await sql`SELECT count(*)::int AS n FROM postel.all_attempts WHERE delivery_id = ${id}`;
  expect(view!["n"]).toBe(2);

  expect(await a.replay.resetDeliveries([{ deliveryId: id, webhookId: "wh_replay" }], NOW + 10)).toEqual([
    id,
  ]);
  const [cleared] = await sql`SELECT first_attempt_id, webhook_id FROM postel.deliveries WHERE id = ${id}`;
  expect(cleared).toEqual({ first_attempt_id: null, webhook_id: "wh_replay" });
  expect(await table()).toEqual([
    { id: "att_1", webhook_id: "wh_first" },
    { id: "att_2", webhook_id: "wh_first" },
  ]);
  await attempt(3, NOW + 11, { kind: "succeeded" });
  expect(
    (await a.operations.listAttempts(message.id)).map((t) => [
      t.id,
      t.attemptNumber,
      t.statusCode,
      t.webhookId,
    ]),
  ).toEqual([
    ["att_1", 1, 503, "wh_first"],
    ["att_2", 2, 200, "wh_first"],
    ["att_3", 3, 200, "wh_replay"],
  ]);
});
