import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import postgres from "postgres";
import { afterEach, beforeEach, expect, test } from "vitest";
import { SERVER_URL } from "./support/database.js";
import { eventually, type Outbox, setUpOutbox } from "./support/outbox.js";
import { startReceiver, type TestReceiver } from "./support/receiver.js";
import { startWorker, stopAllWorkers, type WorkerProcess } from "./support/worker-processes.js";

// The database goes away in the middle of a drain; the worker processes must recover by themselves
// (the dispatcher backs off and retries, postgres.js reconnects) and lose nothing.
let receiver: TestReceiver;
let outbox: Outbox;

beforeEach(async () => {
  receiver = await startReceiver();
  // A slow receiver keeps the drain going long enough to pull the database from under it: at 20 ms,
  // the two worker processes' 16 requests in flight each (test/fixtures/worker.mjs) make at most
  // 1,600/s, so the 2,400 messages left when the outage starts take 1.5 s, however fast the machine.
  receiver.delayMs = 20;
  outbox = await setUpOutbox(receiver.url);
});
afterEach(async () => {
  await stopAllWorkers();
  await receiver.close();
  await outbox.close();
});

const MESSAGES = 3_000;

async function drainAcross(outage: () => Promise<void>): Promise<WorkerProcess[]> {
  const ids = await outbox.send(MESSAGES);
  const workers = await Promise.all(["r1", "r2"].map((name) => startWorker(outbox.database.url, name, "2s")));
  await eventually(
    "a fifth of the messages were answered",
    () => receiver.delivered.size >= MESSAGES / 5,
    30_000,
  );
  await outage();
  // The outage happened in the middle of the drain, not after it.
  expect(receiver.delivered.size).toBeLessThan(MESSAGES);
  await eventually("every message was answered", () => receiver.delivered.size === MESSAGES, 45_000);
  await eventually(
    "every outcome is recorded",
    async () => (await outbox.state()).pendingMessages === 0,
    15_000,
  );

  expect(new Set(receiver.delivered.keys())).toEqual(new Set(ids));
  const state = await outbox.state();
  expect(state).toMatchObject({ succeeded: MESSAGES, other: 0, pendingMessages: 0 });
  // Only work whose outcome could not be recorded when the database vanished was sent again after its
  // lease expired: at-least-once, bounded by what was unrecorded. That is the requests in flight plus
  // finished ones whose outcomes were waiting for the next write, which grows with how slow the machine
  // is: 0–8 repeats here on a quiet machine, 36 once under a full parallel test run. A bug that resent
  // recorded work would repeat thousands; a tenth of the messages separates the two.
  const unrecorded = MESSAGES / 10;
  const repeats = [...receiver.delivered.values()].filter((times) => times > 1).length;
  expect(repeats).toBeLessThanOrEqual(unrecorded);
  expect(state.attempts).toBeLessThanOrEqual(MESSAGES + unrecorded);
  // The same processes finished the drain: they recovered by themselves.
  for (const worker of workers) {
    expect(worker.alive(), `${worker.name} exited:\n${worker.stderr()}`).toBe(true);
  }
  return workers;
}

test("workers recover by themselves when the database drops every connection and refuses new ones for 2 s", async () => {
  const admin = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
  const name = outbox.database.name;
  try {
    const workers = await drainAcross(async () => {
      await admin.unsafe(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${name}`;
      // The outage itself: the workers keep failing to connect for this long.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await admin.unsafe(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    });
    // Refused for 2 s, every worker hit the outage and logged the errors it recovered from.
    for (const worker of workers)
      expect(worker.stderr()).toMatch(/claiming work|recording outcomes|planning deliveries/);
  } finally {
    await admin.unsafe(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`).catch(() => {});
    await admin.end({ timeout: 5 });
  }
}, 60_000);

// Restarting the real server kills every other database's connections too (other test files, other
// people's work on a shared server), so these run only when asked: POSTEL_TEST_RESTART_SERVER=1.
// `fast` is a clean restart; `immediate` is a crash: no shutdown checkpoint, so claims committed
// without waiting for the WAL flush (synchronous_commit off) may be lost, and must cost nothing but
// a redelivery of what was in flight.
const restartServer = process.env["POSTEL_TEST_RESTART_SERVER"] === "1";
for (const mode of ["fast", "immediate"] as const) {
  (restartServer ? test : test.skip)(
    `workers recover by themselves when the PostgreSQL server restarts mid-drain (${mode})` +
      (restartServer ? "" : " (skipped: restarts the whole server; set POSTEL_TEST_RESTART_SERVER=1)"),
    async () => {
      const version = readdirSync("/etc/postgresql")[0] ?? "15";
      const admin = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
      const restartedAfter = Date.now();
      await drainAcross(async () => {
        execFileSync(
          "pg_ctlcluster",
          ["--skip-systemctl-redirect", version, "main", "restart", "--mode", mode],
          { timeout: 30_000 },
        );
      });
      // The server really restarted during the drain (a fast restart is often invisible to the workers:
      // postgres.js reconnects on the next query).
      const [row] = await admin<{ started: Date }[]>`SELECT pg_postmaster_start_time() AS started`;
      await admin.end({ timeout: 5 });
      expect(row?.started.getTime()).toBeGreaterThan(restartedAfter);
    },
    60_000,
  );
}
