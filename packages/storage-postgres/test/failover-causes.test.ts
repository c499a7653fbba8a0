import { isPostelError, Postel, type PostelInstance } from "@postel/core";
import postgres from "postgres";
import { afterEach, beforeEach, expect, test } from "vitest";
import { PostgresStorage, type PostgresStorageInstance } from "../src/index.js";
import { SERVER_URL } from "./support/database.js";
import { eventually, type Outbox, setUpOutbox } from "./support/outbox.js";
import { startReceiver, type TestReceiver } from "./support/receiver.js";
import { startTcpProxy, type TcpProxy } from "./support/tcp-proxy.js";

// One test per way a failover froze, misled or slowed the workers and send() (issue 24), each on the
// real server, each failing on the code before the fix. The network is failed through a TCP proxy;
// a standby is played by sessions that answer read-only (default_transaction_read_only), which is
// what a hot standby answers (SQLSTATE 25006). The full failover runs are in failover.test.ts.

let receiver: TestReceiver;
let outbox: Outbox;
let proxy: TcpProxy;
const admin = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
const running: PostelInstance<PostgresStorageInstance>[] = [];

beforeEach(async () => {
  receiver = await startReceiver();
  outbox = await setUpOutbox(receiver.url);
  proxy = await startTcpProxy({ host: "127.0.0.1", port: Number(new URL(outbox.database.url).port || 5432) });
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((postel) => postel.close()));
  await admin.unsafe(`ALTER DATABASE ${outbox.database.name} ALLOW_CONNECTIONS true`);
  await proxy.close();
  await receiver.close();
  await outbox.close();
});

/** The database's URL with `application_name`, through the proxy when `proxied`. */
function urlOf(name: string, proxied: boolean): string {
  const url = new URL(outbox.database.url);
  if (proxied) url.port = String(proxy.port);
  url.searchParams.set("application_name", name);
  return url.toString();
}

interface Worker {
  postel: PostelInstance<PostgresStorageInstance>;
  errors: { context: string; code: string | undefined; message: string }[];
}

/** A Postel worker on a pool of its own (`{ url }`), started. */
async function startWorker(
  url: string,
  pollInterval: "100ms" | "1h" = "100ms",
  leaseDuration: "2s" | "60s" = "2s",
): Promise<Worker> {
  const postel = Postel({
    outbound: {
      storage: PostgresStorage({ url }, { migrate: false }),
      workers: { leaseDuration, pollInterval, concurrency: 8, batchSize: 8 },
      http: { allowPrivateNetworks: true },
      circuitBreaker: false,
      autoDisable: false,
    },
  });
  running.push(postel);
  const errors: Worker["errors"] = [];
  postel.on("error", ({ context, error }) => {
    const code = isPostelError(error) ? error.code : undefined;
    errors.push({ context, code, message: error instanceof Error ? error.message : String(error) });
  });
  await postel.start();
  return { postel, errors };
}

async function delivered(ids: string[], timeoutMs = 20_000): Promise<void> {
  await eventually(
    `${ids.length} messages were delivered`,
    () => ids.every((id) => receiver.delivered.has(id)),
    timeoutMs,
  );
}

async function terminateSessions(applicationName: string): Promise<number> {
  const [row] = await admin<{ n: number }[]>`
    SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
    WHERE datname = ${outbox.database.name} AND application_name = ${applicationName}`;
  return row?.n ?? 0;
}

test("a storage call that never settles (a frozen session) fails with STORAGE_UNAVAILABLE or STORAGE_TIMEOUT and the worker delivers on new sessions", async () => {
  const worker = await startWorker(urlOf("frozen-worker", true));
  await delivered(await outbox.send(1));
  // Every session through the proxy stops answering, and stays open: no error, no close, ever.
  proxy.freeze();
  const ids = await outbox.send(20);
  // Leases of 2 s: a call gets 1 s, then the worker gives up on its sessions and opens new ones.
  await delivered(ids);
  expect(worker.errors.some((e) => e.code === "STORAGE_TIMEOUT")).toBe(true);
  const timeout = worker.errors.find((e) => e.code === "STORAGE_TIMEOUT");
  expect(timeout?.message).toMatch(/did not settle within 1000 ms .*dropped the connections it owns/);
});

test("after every session of the pool was cut, the next claim opens a connection and settles: it never waits for another query to free one", async () => {
  // Default leases (60 s, so a call may take 30 s before it times out) and an hour between polls:
  // only the worker's own claims, woken by NOTIFY, deliver. postgres.js 3.4.9's reserve() never
  // settles when it opens the connection itself with fetch_types off (Postel's own pool, once it knows
  // the types): the claim after a cut hung until some other query freed a connection.
  const worker = await startWorker(urlOf("cut-worker", false), "1h", "60s");
  await delivered(await outbox.send(3), 10_000);
  expect(await terminateSessions("cut-worker")).toBeGreaterThan(0);
  await eventually(
    "the worker listens again",
    async () =>
      (
        await admin`SELECT 1 FROM pg_stat_activity WHERE datname = ${outbox.database.name}
          AND application_name = 'cut-worker' AND query ILIKE 'LISTEN%'`
      ).length > 0,
    20_000,
  );
  await delivered(await outbox.send(5), 10_000);
  expect(worker.errors.filter((e) => e.code === "STORAGE_TIMEOUT")).toEqual([]);
});

test("sessions that answer read-only (a standby) are dropped: the workers reconnect and deliver once the server takes writes", async () => {
  const worker = await startWorker(urlOf("standby-worker", false));
  await delivered(await outbox.send(1));
  const name = outbox.database.name;
  // The worker's sessions come back read-only, as on a hot standby, and stay so after the server
  // takes writes again (the setting is read when a session starts).
  await admin.unsafe(`ALTER DATABASE ${name} SET default_transaction_read_only = on`);
  expect(await terminateSessions("standby-worker")).toBeGreaterThan(0);
  await eventually(
    "the worker reported the read-only server",
    () => worker.errors.some((e) => /connected to a read-only server, a standby\?/.test(e.message)),
    20_000,
  );
  expect(worker.errors.find((e) => /read-only server/.test(e.message))?.code).toBe("STORAGE_UNAVAILABLE");

  // send() on a read-only session is STORAGE_UNAVAILABLE too, never the driver's raw 25006.
  const sender = Postel({
    outbound: { storage: PostgresStorage({ url: urlOf("standby-sender", false) }, { migrate: false }) },
  });
  running.push(sender);
  const refused = await sender.outbound
    .send({ type: "order.created", data: {} })
    .catch((error: unknown) => error);
  expect(refused).toMatchObject({
    code: "STORAGE_UNAVAILABLE",
    message: expect.stringMatching(/read-only server/),
  });

  await admin.unsafe(`ALTER DATABASE ${name} RESET default_transaction_read_only`);
  const ids = await outbox.send(20);
  await delivered(ids);
});

test("a LISTEN lost while the server refused connections is made again: wake-ups come back without polling", async () => {
  // With an hour between polls, only a wake-up (NOTIFY) or Postel's own short polling while it knows
  // LISTEN is lost can deliver within the test.
  const worker = await startWorker(urlOf("listen-worker", false), "1h");
  await delivered(await outbox.send(1), 10_000);
  const name = outbox.database.name;
  await admin.unsafe(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
  expect(await terminateSessions("listen-worker")).toBeGreaterThan(0);
  // postgres.js's own re-LISTEN after a reconnect fails here, and swallows the error.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  await admin.unsafe(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);

  await eventually(
    "the worker listens again",
    async () =>
      (
        await admin`SELECT 1 FROM pg_stat_activity WHERE datname = ${name}
          AND application_name = 'listen-worker' AND query ILIKE 'LISTEN%'`
      ).length > 0,
    20_000,
  );
  const listenErrors = worker.errors.filter((e) => e.context === "listening for wake-ups");
  expect(listenErrors).toHaveLength(1);
  expect(listenErrors[0]?.message).toMatch(/Wake-ups from other processes stopped/);
  // Listening again, the workers went back to their own poll interval: this one arrives by NOTIFY.
  const started = Date.now();
  await delivered(await outbox.send(1), 10_000);
  expect(Date.now() - started).toBeLessThan(5_000);
});

test("a batch of sends whose commit's answer was lost is resolved: each send succeeds, each message is stored once", async () => {
  const sender = Postel({
    outbound: { storage: PostgresStorage({ url: urlOf("ambiguous-sender", true) }, { migrate: false }) },
  });
  running.push(sender);
  // A batch of three sends (one INSERT) and a send alone (another), each after the other.
  const burst = (tag: string) => {
    const batch = [1, 2, 3].map((n) => sender.outbound.send({ type: "order.created", data: { tag, n } }));
    const lone = (async () => {
      await new Promise((resolve) => setImmediate(resolve));
      return sender.outbound.send({ type: "order.created", data: { tag, lone: true } });
    })();
    return [...batch, lone];
  };
  // postgres.js prepares a statement before it executes it the first time (and waits for the answer
  // to do so): with both statements prepared, the INSERTs below are executed without any answer.
  for (let i = 0; i < 3; i++) await Promise.all(burst(`warm-${i}`));
  const before = (await outbox.sql`SELECT id FROM postel.messages`).length;
  // The INSERTs reach the server and commit; their answers never come back, then the session is cut.
  proxy.dropReplies();
  const sends = burst("lost");
  await eventually(
    "the four messages were committed",
    async () => (await outbox.sql`SELECT id FROM postel.messages`).length === before + 4,
    10_000,
  );
  proxy.cut();
  const results = await Promise.all(sends);
  const ids = results.map((result) => result.id);
  const stored = await outbox.sql<{ id: string }[]>`SELECT id FROM postel.messages WHERE id = ANY(${ids})`;
  expect(stored.map((row) => row.id).sort()).toEqual([...ids].sort());
});

test("a send whose commit cannot be checked is STORAGE_UNAVAILABLE with ambiguous: true, advising an idempotencyKey", async () => {
  const sender = Postel({
    outbound: { storage: PostgresStorage({ url: urlOf("unknown-sender", true) }, { migrate: false }) },
  });
  running.push(sender);
  for (let i = 0; i < 3; i++) await sender.outbound.send({ type: "order.created", data: { warm: i } });
  proxy.dropReplies();
  const send = sender.outbound.send({ type: "order.created", data: {} }).catch((error: unknown) => error);
  await eventually(
    "the message was committed",
    async () => (await outbox.sql`SELECT id FROM postel.messages`).length === 4,
    10_000,
  );
  // No new session can be made to check: the outcome stays unknown to the sender.
  await admin.unsafe(`ALTER DATABASE ${outbox.database.name} ALLOW_CONNECTIONS false`);
  proxy.cut();
  const error = await send;
  expect(error).toMatchObject({
    code: "STORAGE_UNAVAILABLE",
    ambiguous: true,
    message: expect.stringMatching(/may or may not have been stored.*idempotencyKey/),
  });
});

test("a sendBatch whose commit's answer was lost is STORAGE_UNAVAILABLE with ambiguous: true, never INVALID_ARGUMENT", async () => {
  const sender = Postel({
    outbound: { storage: PostgresStorage({ url: urlOf("batch-sender", true) }, { migrate: false }) },
  });
  running.push(sender);
  const batch = (tag: string) =>
    sender.outbound.sendBatch([1, 2, 3].map((n) => ({ type: "order.created", data: { tag, n } })));
  // Prepared first (see above), so that the INSERT below is executed without waiting for an answer.
  for (let i = 0; i < 3; i++) await batch(`warm-${i}`);
  const before = (await outbox.sql`SELECT id FROM postel.messages`).length;
  proxy.dropReplies();
  const sent = batch("lost").catch((error: unknown) => error);
  await eventually(
    "the batch was committed",
    async () => (await outbox.sql`SELECT id FROM postel.messages`).length === before + 3,
    10_000,
  );
  proxy.cut();
  expect(await sent).toMatchObject({
    code: "STORAGE_UNAVAILABLE",
    ambiguous: true,
    message: expect.stringMatching(/may or may not have been stored.*idempotencyKey/),
  });
});
