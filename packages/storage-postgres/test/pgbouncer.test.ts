import { type Duration, Postel } from "@postel/core";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { PostgresStorage } from "../src/index.js";
import { createTestDatabase, type TestDatabase } from "./support/database.js";
import { eventually } from "./support/outbox.js";
import { PGBOUNCER_BINARY, type PgBouncer, startPgBouncer } from "./support/pgbouncer.js";
import { startReceiver, type TestReceiver } from "./support/receiver.js";

// Through PgBouncer in transaction-pooling mode (PgBouncer 1.18, Debian 12's: no prepared statements
// across transactions, no LISTEN): migrations, send(), sendBatch(), a send in the app's transaction
// and the workers all run with `prepare: false`; LISTEN goes to the server directly (`listen: { url }`)
// or is turned off, and then other instances' messages are found by polling.

// .ci/run installs PgBouncer (and fails if it cannot): only a machine without it skips, saying so.
const missing = PGBOUNCER_BINARY === undefined;

describe.skipIf(missing)("through PgBouncer (pool_mode = transaction)", () => {
  let database: TestDatabase;
  let bouncer: PgBouncer;
  let receiver: TestReceiver;
  const running: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    bouncer = await startPgBouncer();
    receiver = await startReceiver();
  }, 30_000);
  afterAll(async () => {
    for (const instance of running) await instance.close();
    await receiver?.close();
    await bouncer?.stop();
    await database?.drop();
  });

  const instance = (options: Parameters<typeof PostgresStorage>[1], pollInterval: Duration = "10s") => {
    const postel = Postel({
      outbound: {
        storage: PostgresStorage({ url: bouncer.through(database.url) }, options),
        http: { allowPrivateNetworks: true },
        workers: { pollInterval },
      },
    });
    running.push(postel);
    return postel;
  };

  /** Resolves with the milliseconds until every id was answered once, or fails after `ms`. */
  const deliveredWithin = async (ids: string[], ms: number): Promise<number> => {
    const started = performance.now();
    while (ids.some((id) => !receiver.delivered.has(id))) {
      if (performance.now() - started > ms) {
        const late = ids.filter((id) => !receiver.delivered.has(id));
        throw new Error(`${late.length} of ${ids.length} not delivered within ${ms} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return performance.now() - started;
  };

  test("migrations, send(), sendBatch() and a send in the app's transaction reach workers, each delivered once", async () => {
    // The first call migrates, through PgBouncer: the migration's advisory lock is per transaction.
    const worker = instance({ prepare: false, listen: { url: database.url } });
    await worker.outbound.endpoints.create({ url: receiver.url, types: ["*"] });
    await worker.start();

    const sender = instance({ prepare: false, listen: false });
    const app = postgres(bouncer.through(database.url), { prepare: false, max: 4, onnotice: () => {} });
    try {
      const ids = [
        ...(await Promise.all(
          Array.from({ length: 20 }, (_, n) => sender.outbound.send({ type: "t.one", data: { n } })),
        )),
        ...(await sender.outbound.sendBatch(
          Array.from({ length: 20 }, (_, n) => ({ type: "t.batch", data: { n } })),
        )),
        await app.begin((tx) => sender.outbound.send({ type: "t.tx", data: {} }, { tx })),
      ].map((result) => result.id);
      // The worker's pollInterval is 10 s: arriving sooner means its LISTEN (on the server) woke it.
      const ms = await deliveredWithin(ids, 5_000);
      expect(ms).toBeLessThan(5_000);
      expect(ids.map((id) => receiver.delivered.get(id))).toEqual(ids.map(() => 1));
      // The receiver counts a request before its answer is back at the worker: the attempt is
      // recorded after that, so wait for it rather than race it.
      await eventually(
        "the first message's attempt is recorded",
        async () => (await sender.outbound.messages.attempts(ids[0]!)).length > 0,
        10_000,
      );
      expect(await sender.outbound.messages.attempts(ids[0]!)).toHaveLength(1);
    } finally {
      await app.end();
    }
  }, 30_000);

  test("with listen: false, a worker finds another instance's messages by polling, within its pollInterval", async () => {
    const worker = instance({ prepare: false, listen: false }, "250ms");
    await worker.start();
    const sender = instance({ prepare: false, listen: false });
    const { id } = await sender.outbound.send({ type: "t.poll", data: {} });
    const ms = await deliveredWithin([id], 5_000);
    // At most one pollInterval (plus a claim and a request): the fallback's wake-up latency.
    expect(ms).toBeLessThan(250 + 750);
    expect(receiver.delivered.get(id)).toBe(1);
  }, 30_000);
});

if (missing) {
  test.skip("PgBouncer tests: skipped, pgbouncer is not installed (apt-get install pgbouncer; .ci/run installs it)", () => {});
}
