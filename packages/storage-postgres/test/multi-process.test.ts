import { afterEach, beforeEach, expect, test } from "vitest";
import { eventually, type Outbox, setUpOutbox } from "./support/outbox.js";
import { startReceiver, type TestReceiver } from "./support/receiver.js";
import { startWorker, stopAllWorkers } from "./support/worker-processes.js";

// Real OS processes, each with its own pool and worker pool (test/fixtures/worker.mjs on dist/),
// draining one database to a real HTTP receiver on 127.0.0.1.
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

test("4 worker processes drain 2,000 messages: every one delivered exactly once", async () => {
  const workers = await Promise.all(
    ["p1", "p2", "p3", "p4"].map((name) => startWorker(outbox.database.url, name, "30s")),
  );
  const ids = await outbox.send(2_000);

  await eventually("every message was answered", () => receiver.delivered.size === ids.length, 45_000);
  await eventually(
    "every outcome is recorded",
    async () => (await outbox.state()).pendingMessages === 0,
    10_000,
  );

  expect(new Set(receiver.delivered.keys())).toEqual(new Set(ids));
  // Nobody crashed, so nothing was sent twice: one request per message, one attempt per delivery.
  expect([...receiver.delivered.values()].every((times) => times === 1)).toBe(true);
  expect(receiver.arrivals).toHaveLength(ids.length);
  expect(await outbox.state()).toEqual({ succeeded: 2_000, other: 0, pendingMessages: 0, attempts: 2_000 });
  // The work was shared: every process delivered some of it.
  const byProcess = new Map<string, number>();
  for (const { agent } of receiver.arrivals) byProcess.set(agent, (byProcess.get(agent) ?? 0) + 1);
  expect(byProcess.size).toBe(workers.length);
}, 60_000);
