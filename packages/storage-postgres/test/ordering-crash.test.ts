import { afterEach, beforeEach, expect, test } from "vitest";
import { eventually, type Outbox, setUpOutbox } from "./support/outbox.js";
import { startReceiver, type TestReceiver } from "./support/receiver.js";
import { crash, startWorker, stopAllWorkers } from "./support/worker-processes.js";

// Ordered delivery survives a crash: a worker process SIGKILLed mid-drain dies holding the leases of
// its keys' heads; another process takes each head again once its lease expires, and every key still
// goes one message at a time, in send order.
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

const KEYS = 40;
const PER_KEY = 25;

test(`SIGKILL of a worker mid-drain keeps every key in order (${KEYS} keys × ${PER_KEY}, two processes)`, async () => {
  // Message ids are the webhook-ids; each key's messages are sent in rounds, interleaved with the others'.
  const place = new Map<string, { key: string; index: number }>();
  const byKey = new Map<string, string[]>();
  for (let index = 0; index < PER_KEY; index++) {
    const events = Array.from({ length: KEYS }, (_, k) => ({
      type: "sub.updated",
      data: { k, index },
      orderingKey: `sub_${k}`,
    }));
    const results = await outbox.postel.outbound.sendBatch(events);
    results.forEach(({ id }, k) => {
      place.set(id, { key: `sub_${k}`, index });
      byKey.set(`sub_${k}`, [...(byKey.get(`sub_${k}`) ?? []), id]);
    });
  }
  // Slow answers keep the drain going while the victim dies.
  receiver.delayMs = 20;
  const victim = await startWorker(outbox.database.url, "victim", "2s");
  await eventually("the victim has sent 200 requests", () => receiver.arrivals.length >= 200, 30_000);
  await crash(victim);
  await startWorker(outbox.database.url, "survivor", "2s");
  await eventually("every message was answered", () => receiver.delivered.size === place.size, 60_000);

  // A request for a key's message arrives only after the key's earlier message was answered 200; a
  // repeat (the victim's unrecorded request, sent again) is of the same message, never of a later one.
  const problems: string[] = [];
  for (const { webhookId, at } of receiver.arrivals) {
    const { key, index } = place.get(webhookId)!;
    if (index === 0) continue;
    const previous = byKey.get(key)![index - 1]!;
    const answered = receiver.answeredAt.get(previous);
    if (answered === undefined || answered > at)
      problems.push(`${key}: message ${index} before ${index - 1} was answered`);
  }
  expect(problems.slice(0, 5)).toEqual([]);
  expect(receiver.arrivals.some(({ agent }) => agent === "postel-test/survivor")).toBe(true);
  await eventually(
    "every outcome is recorded",
    async () => (await outbox.state()).pendingMessages === 0,
    20_000,
  );
  expect((await outbox.state()).succeeded).toBe(KEYS * PER_KEY);
}, 120_000);
