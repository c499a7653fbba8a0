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
    SELECT webhook_id, started_at FROM postel.all_attempts WHERE webhook_id IN ${outbox.sql(inFlight)}`;
  for (const { webhook_id, started_at } of attempts) {
    const sentByVictim = fromVictim.find(({ webhookId }) => webhookId === webhook_id)!.at;
    expect(Number(started_at)).toBeGreaterThanOrEqual(sentByVictim + 1_500);
  }
  expect(attempts).toHaveLength(inFlight.length);
}, 60_000);

// A crash sends again what the dead process had sent but not recorded. A delivery holds its slot in
// the pool until its outcome is written, so that is at most the pool's budget (`workers.concurrency`),
// however many answers were waiting for the group commit when the process died.
const CONCURRENCY = 64;
const KILLS = 5;
const MESSAGES = 3_000;

test(`SIGKILL mid-drain sends again at most the ${CONCURRENCY} deliveries the pool had in flight, per kill`, async () => {
  const ids = await outbox.send(MESSAGES);
  const pool = { concurrency: CONCURRENCY, batchSize: 64 };
  const sentBy = (name: string) => receiver.arrivals.filter(({ agent }) => agent === `postel-test/${name}`);

  // A 5 s lease: a victim starved of CPU by other test files must not see its leases lapse while it
  // lives (that would be a repeat too, but not the crash's).
  for (let kill = 0; kill < KILLS; kill++) {
    const victim = await startWorker(outbox.database.url, `victim-${kill}`, "5s", pool);
    // Killed at full speed, with answers arriving and outcomes waiting for their group commit.
    await eventually(
      `victim-${kill} has sent 300 requests`,
      () => sentBy(`victim-${kill}`).length >= 300,
      30_000,
    );
    await crash(victim);
  }
  await startWorker(outbox.database.url, "survivor", "5s", pool);
  await eventually("every message was answered", () => receiver.delivered.size === ids.length, 60_000);
  await eventually(
    "every outcome is recorded",
    async () => (await outbox.state()).pendingMessages === 0,
    10_000,
  );

  // Receipts per id: a kill's duplicates are the ids it sent first that another process sent again,
  // each counted once: an id the next victim re-sent and was killed holding is sent a third time
  // (by the survivor), but it was one of the first kill's in-flight requests, not two.
  const first = new Map<string, string>();
  const duplicates = new Map<string, Set<string>>();
  for (const { webhookId, agent } of receiver.arrivals) {
    const sender = first.get(webhookId);
    if (sender === undefined) first.set(webhookId, agent);
    else if (sender !== agent) {
      const ids = duplicates.get(sender) ?? new Set<string>();
      duplicates.set(sender, ids.add(webhookId));
    }
  }
  const duplicatesPerKill = Array.from(
    { length: KILLS },
    (_, kill) => duplicates.get(`postel-test/victim-${kill}`)?.size ?? 0,
  );
  console.log(
    `[crash bounds] duplicates per SIGKILL: ${duplicatesPerKill.join(", ")} (bound: ${CONCURRENCY} in flight)`,
  );
  for (const count of duplicatesPerKill) expect(count).toBeLessThanOrEqual(CONCURRENCY);
  // Nothing was lost.
  expect(new Set(receiver.delivered.keys())).toEqual(new Set(ids));
  expect((await outbox.state()).succeeded).toBe(MESSAGES);
}, 180_000);
