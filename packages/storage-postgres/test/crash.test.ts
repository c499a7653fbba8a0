import { afterEach, beforeEach, expect, test } from "vitest";
import { eventually, type Outbox, setUpOutbox } from "./support/outbox.js";
import { startReceiver, type TestReceiver } from "./support/receiver.js";
import { crash, startWorker, stopAllWorkers } from "./support/worker-processes.js";

// A worker process is SIGKILLed while its requests are in flight (the receiver holds them open), so
// it dies holding leases and having recorded nothing. Another process takes the work once they expire.
let receiver: TestReceiver;
let outbox: Outbox;

beforeEach(async () => {
  receiver = await startReceiver();
  outbox = await setUpOutbox(receiver.url);
});
afterEach(async () => {
  await stopAllWorkers();
  await receiver.close();
  await outbox.close();
});

test("a worker killed mid-delivery loses nothing: its leased work is delivered by another process", async () => {
  receiver.holdWhere(({ agent }) => agent === "postel-test/victim");
  const ids = await outbox.send(200);
  const victim = await startWorker(outbox.database.url, "victim", "2s");
  // The victim's whole pool (2 lanes × 8 requests) is in flight, held by the receiver, when it is killed.
  await eventually("the victim has 16 requests in flight", () => receiver.held().length === 16, 20_000);
  const inFlight = receiver.held().map(({ webhookId }) => webhookId);
  await crash(victim);

  const survivor = await startWorker(outbox.database.url, "survivor", "2s");
  await eventually("every message was answered", () => receiver.delivered.size === ids.length, 30_000);
  await eventually(
    "every outcome is recorded",
    async () => (await outbox.state()).pendingMessages === 0,
    10_000,
  );

  expect(new Set(receiver.delivered.keys())).toEqual(new Set(ids));
  // The survivor sent everything, each message once; the only repeats are the victim's in-flight
  // requests, sent again after their lease expired (at-least-once).
  const fromSurvivor = receiver.arrivals.filter(({ agent }) => agent === "postel-test/survivor");
  expect(fromSurvivor).toHaveLength(ids.length);
  expect(new Set(fromSurvivor.map(({ webhookId }) => webhookId)).size).toBe(ids.length);
  const fromVictim = receiver.arrivals.filter(({ agent }) => agent === "postel-test/victim");
  expect(fromVictim.map(({ webhookId }) => webhookId).sort()).toEqual([...inFlight].sort());
  // The victim recorded nothing; every delivery has exactly the survivor's one attempt.
  expect(await outbox.state()).toEqual({ succeeded: 200, other: 0, pendingMessages: 0, attempts: 200 });
  expect(survivor.alive()).toBe(true);
  // Its leased deliveries were taken only once the lease (2 s, taken before the request was sent) expired.
  const attempts = await outbox.sql<{ webhook_id: string; started_at: string }[]>`
    SELECT webhook_id, started_at FROM postel.attempts WHERE webhook_id IN ${outbox.sql(inFlight)}`;
  for (const { webhook_id, started_at } of attempts) {
    const sentByVictim = fromVictim.find(({ webhookId }) => webhookId === webhook_id)!.at;
    expect(Number(started_at)).toBeGreaterThanOrEqual(sentByVictim + 1_500);
  }
  expect(attempts).toHaveLength(inFlight.length);
}, 60_000);
