import { randomUUID } from "node:crypto";
import type { ClaimedDelivery, DeliveryOutcome, FanoutResult } from "@postel/core/storage";
import { newEndpoint, newMessage } from "@postel/core/storage/conformance";
import type { Sql } from "postgres";
import { expect, test } from "vitest";
import { PostgresStorage, type PostgresStorageInstance } from "../src/index.js";
import { lockKeys } from "../src/ordering/key-locks.js";
import { migratedDatabase } from "./support/database.js";

// ORDERING_RULES across instances: two storages on two pools of one database fan out and deliver the
// same keys at once. The per-key advisory locks must keep one head per endpoint and key at every
// moment, and each key's deliveries must be made in message id order. Without the locks, a key's head
// ending while another worker fans out the key's next message leaves that message waiting for ever
// (each transaction settles the key before seeing the other's write): the test then times out.

const db = migratedDatabase();

const KEYS = ["k0", "k1", "k2"];
const MESSAGES = 300;
/** Workers per instance, each looping on its own. */
const WORKERS = 2;
/** Every message is finished by then, or a key stalled. */
const DEADLINE_MS = 30_000;
const LEASE_MS = 60_000;

/** One worker's pass: fan out what it claims (its heads come back leased), claim what is due, end it all. */
async function pass(
  storage: PostgresStorageInstance,
  owner: string,
  endpoints: string[],
  made: (claimed: ClaimedDelivery) => void,
): Promise<number> {
  const now = Date.now();
  const lease = { owner, now, until: now + LEASE_MS, limit: 4 };
  const messages = await storage.claimFanout(lease);
  const results: FanoutResult[] = messages.map(({ message, token }) => ({
    messageId: message.id,
    token,
    orderingKey: message.orderingKey!,
    deliveries: endpoints.map((endpointId) => ({
      id: `dlv_${randomUUID()}`,
      messageId: message.id,
      endpointId,
      webhookId: message.id,
      createdAt: now,
      orderingKey: message.orderingKey!,
    })),
  }));
  const leased = await storage.recordFanout(results, now, { owner, until: lease.until });
  const claimed = [...leased, ...(await storage.claimDue(lease))];
  for (const c of claimed) made(c);
  const outcomes: DeliveryOutcome[] = claimed.map((c, i) => ({
    deliveryId: c.delivery.id,
    leaseToken: c.leaseToken,
    // Every fifth one retries first: its key keeps waiting behind it.
    transition:
      i % 5 === 0 && c.delivery.retriesUsed === 0
        ? { kind: "retry", nextAttemptAt: now, retriesUsed: 1 }
        : { kind: "succeeded" },
    orderingKey: c.delivery.orderingKey!,
  }));
  await storage.recordOutcomes(outcomes, Date.now());
  return messages.length + claimed.length;
}

test("two instances fanning out and delivering the same keys keep one head per endpoint and key, in message id order", async () => {
  const one = PostgresStorage({ sql: db.database.connect({ max: 4 }) }, { migrate: false });
  const two = PostgresStorage({ sql: db.database.connect({ max: 4 }) }, { migrate: false });
  const watcher = db.database.connect({ max: 1 });
  const endpoints = [newEndpoint(), newEndpoint()];
  for (const endpoint of endpoints) await one.createEndpoint(endpoint);
  const ids = endpoints.map((endpoint) => endpoint.id);
  const sent = Array.from({ length: MESSAGES }, (_, i) =>
    newMessage({ orderingKey: KEYS[i % KEYS.length]! }),
  );
  await one.batchSend.enqueueMany(sent, undefined);

  // The order each (endpoint, key) pair's deliveries were claimed in, by message id (a retry claims again).
  const made = new Map<string, string[]>();
  const record = (claimed: ClaimedDelivery) => {
    const pair = `${claimed.delivery.endpointId} ${claimed.delivery.orderingKey}`;
    const order = made.get(pair) ?? [];
    made.set(pair, order);
    if (order.at(-1) !== claimed.message.id) order.push(claimed.message.id);
  };
  let done = false;
  const worker = async (storage: PostgresStorageInstance, owner: string) => {
    while (!done) await pass(storage, owner, ids, record);
  };
  const heads: number[] = [];
  const watch = async () => {
    while (!done) {
      const [row] = await watcher<{ n: number }[]>`
        SELECT count(*)::int AS n FROM (
          SELECT 1 FROM postel.deliveries WHERE ordering_key IS NOT NULL AND status IN ('pending', 'held')
          GROUP BY endpoint_id, ordering_key HAVING count(*) > 1) twice`;
      heads.push(row!.n);
    }
  };
  const finished = async () => {
    for (const deadline = Date.now() + DEADLINE_MS; Date.now() < deadline; ) {
      const [row] = await watcher<{ open: number }[]>`
        SELECT count(*)::int AS open FROM postel.messages WHERE status = 'pending'`;
      if (row!.open === 0) return true;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return false;
  };
  const running = [
    ...Array.from({ length: WORKERS }, (_, i) => [worker(one, `one-${i}`), worker(two, `two-${i}`)]).flat(),
    watch(),
  ];
  try {
    expect(await finished(), "every message finished (no key stalled)").toBe(true);
  } finally {
    done = true;
    await Promise.all(running);
  }

  expect(heads.length).toBeGreaterThan(10);
  expect(heads.filter((n) => n > 0)).toEqual([]);
  const byKey = new Map(KEYS.map((key) => [key, sent.filter((m) => m.orderingKey === key).map((m) => m.id)]));
  expect(made.size).toBe(ids.length * KEYS.length);
  for (const [pair, order] of made) expect(order, pair).toEqual(byKey.get(pair.split(" ")[1]!));
  const [statuses] = await watcher<{ open: number }[]>`
    SELECT count(*) FILTER (WHERE status <> 'succeeded')::int AS open FROM postel.deliveries`;
  expect(statuses!.open).toBe(0);
  await Promise.all([one.close(), two.close()]);
}, 120_000);

test("a keyed fan-out waits for its key's lock, and only for its own key's", async () => {
  const storage = PostgresStorage({ sql: db.database.connect({ max: 4 }) }, { migrate: false });
  const holder = db.database.connect({ max: 1 });
  const endpoint = newEndpoint();
  await storage.createEndpoint(endpoint);
  const [k, j] = [newMessage({ orderingKey: "k" }), newMessage({ orderingKey: "j" })];
  await storage.batchSend.enqueueMany([k, j], undefined);
  const now = Date.now();
  const claimed = await storage.claimFanout({ owner: "w", now, until: now + LEASE_MS, limit: 10 });
  const fanOut = (id: string) => {
    const { message, token } = claimed.find((c) => c.message.id === id)!;
    const key = message.orderingKey!;
    const delivery = {
      id: `dlv_${randomUUID()}`,
      messageId: id,
      endpointId: endpoint.id,
      webhookId: id,
      createdAt: now,
    };
    return storage.recordFanout(
      [{ messageId: id, token, orderingKey: key, deliveries: [{ ...delivery, orderingKey: key }] }],
      now,
    );
  };
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked!: () => void;
  const holding = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const held = holder.begin(async (tx) => {
    await lockKeys(tx as unknown as Sql, ["k"]);
    locked();
    await released;
  });
  await holding;
  let kDone = false;
  const kFanout = fanOut(k.id).then(() => {
    kDone = true;
  });
  await fanOut(j.id);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(kDone, "k's fan-out waits for k's lock").toBe(false);
  expect((await storage.listDeliveries(j.id)).map((d) => d.status)).toEqual(["pending"]);
  release();
  await Promise.all([held, kFanout]);
  expect((await storage.listDeliveries(k.id)).map((d) => d.status)).toEqual(["pending"]);
  await storage.close();
});
