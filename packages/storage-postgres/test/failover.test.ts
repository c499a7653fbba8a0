import { isPostelError, Postel, type PostelInstance } from "@postel/core";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { migrate, PostgresStorage, type PostgresStorageInstance } from "../src/index.js";
import { truncatePostel } from "./support/database.js";
import { type FailoverCluster, startFailoverCluster } from "@postel/failover-cluster";
import { eventually } from "./support/outbox.js";
import { startReceiver, type TestReceiver } from "./support/receiver.js";

// Issue 24's proof: a real pg_auto_failover pair (monitor, primary, synchronous standby on 127.0.0.1,
// timeouts shortened: see @postel/failover-cluster), Postel with default settings on the multi-host
// URL, 5,000 messages queued and a second Postel calling send() at 200/s, struck at 30% of the drain by
// a clean stop of the primary, a SIGKILL of it, or a cut of every client session with both nodes
// healthy. Each strike runs REPEATS times, so an intermittent freeze shows.
const REPEATS = Number(process.env["POSTEL_FAILOVER_REPEATS"] ?? 2);
const QUEUED = 5_000;
// What a strike may send again: the requests in flight and the outcomes waiting to be written, which
// the pool's budget bounds (workers.concurrency "auto" goes up to 1,024).
const IN_FLIGHT_BOUND = 1_024;
const RESUME_WITHIN_MS = 2_000;
// A span this long without a probe commit (it commits every 100 ms) is the database not taking commits.
const PROBE_STALL_MS = 500;

let cluster: FailoverCluster;
let receiver: TestReceiver;
let admin: postgres.Sql;

beforeAll(async () => {
  cluster = await startFailoverCluster({ database: "postel" });
  receiver = await startReceiver();
  admin = postgres(cluster.url("primary"), { max: 1, onnotice: () => {} });
  await migrate(admin);
  await admin`CREATE TABLE IF NOT EXISTS failover_probe (at timestamptz NOT NULL)`;
}, 180_000);
afterAll(async () => {
  await admin?.end({ timeout: 1 });
  await receiver?.close();
  await cluster?.close();
}, 60_000);

interface Sender {
  /** Ids of the sends that succeeded. */
  sent: string[];
  /** Every send that failed, by its code (undefined when it was not a PostelError). */
  failures: (string | undefined)[];
  pending(): number;
  /** Stops sending; resolves when every send has settled. */
  stop(): Promise<void>;
}

/** Calls `send()` at about 200/s, one every 5 ms, never waiting for the one before. */
function startSending(postel: PostelInstance<PostgresStorageInstance>): Sender {
  const sent: string[] = [];
  const failures: (string | undefined)[] = [];
  let pending = 0;
  let n = 0;
  const timer = setInterval(() => {
    pending++;
    postel.outbound
      .send({ type: "order.created", data: { n: n++ } })
      .then(
        (result) => sent.push(result.id),
        (error: unknown) => failures.push(isPostelError(error) ? error.code : undefined),
      )
      .finally(() => pending--);
  }, 5);
  return {
    sent,
    failures,
    pending: () => pending,
    stop: async () => {
      clearInterval(timer);
      await eventually("every send settled", () => pending === 0, 60_000);
    },
  };
}

/**
 * Commits one INSERT on the primary (the multi-host URL, target_session_attrs=primary) every 100 ms on
 * a connection of its own, recording when each commit came back: what the database itself could do
 * while the worker was silent. A commit that takes 3 s is abandoned with its session.
 */
interface CommitProbe {
  /** When each commit came back (epoch ms). */
  commits: number[];
  /** The longest spans between commits in [from, to], longest first, relative to `origin`. */
  stalls(from: number, to: number, origin: number): string;
  /** The spans within `from`..`to` longer than `minMs` between two commits (`from` counts as one). */
  spansWithoutCommit(from: number, to: number, minMs: number): { from: number; to: number }[];
  stop(): Promise<void>;
}

function startCommitProbe(url: string): CommitProbe {
  const commits: number[] = [];
  let running = true;
  const connect = () =>
    postgres(url, {
      max: 1,
      connect_timeout: 2,
      onnotice: () => {},
      backoff: () => 0.05,
      // No type lookup on connect: a session cut during it rejects with nobody to catch it.
      fetch_types: false,
      connection: { application_name: "failover-commit-probe" },
    });
  const loop = (async () => {
    let sql = connect();
    while (running) {
      const outcome = await Promise.race([
        sql`INSERT INTO failover_probe VALUES (now())`.then(
          () => "ok",
          () => "failed",
        ),
        new Promise<string>((resolve) => setTimeout(resolve, 3_000, "timeout")),
      ]);
      if (outcome === "ok") commits.push(Date.now());
      else {
        void sql.end({ timeout: 0 }).catch(() => {});
        sql = connect();
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await sql.end({ timeout: 1 }).catch(() => {});
  })();
  function spansWithoutCommit(from: number, to: number, minMs: number): { from: number; to: number }[] {
    const within = [from, ...commits.filter((at) => at > from && at < to), to];
    return within
      .slice(1)
      .map((at, i) => ({ from: within[i]!, to: at }))
      .filter((span) => span.to - span.from > minMs);
  }
  return {
    commits,
    stalls(from, to, origin) {
      return (
        spansWithoutCommit(from, to, 0)
          .sort((a, b) => b.to - b.from - (a.to - a.from))
          .slice(0, 3)
          .map((span) => `${span.to - span.from} ms from ${((span.from - origin) / 1000).toFixed(1)} s`)
          .join(", ") + ` (${commits.filter((at) => at >= from && at <= to).length} commits)`
      );
    },
    spansWithoutCommit,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/**
 * What a failed wait reports, the decisive part last (CI shows the end of the output): the cluster's
 * logs, then what the worker's sessions were doing, the arrivals per second and the worker's errors.
 */
async function failure(
  error: unknown,
  startedAt: number,
  workerErrors: string[],
  probe: CommitProbe,
): Promise<string> {
  const timeline = new Map<number, number>();
  for (const arrival of receiver.arrivals) {
    const second = Math.floor((arrival.at - startedAt) / 1000);
    timeline.set(second, (timeline.get(second) ?? 0) + 1);
  }
  const perSecond = [...timeline]
    .sort((a, b) => a[0] - b[0])
    .map(([second, n]) => `${second}:${n}`)
    .join(" ");
  return [
    await cluster.diagnostics(),
    `--- sessions of "postel" on the primary, and the outbox\n${await sessions()}`,
    `${String(error)}: ${receiver.delivered.size} delivered; arrivals per second since the worker started: ${perSecond}`,
    `the database's longest spans without a commit (a probe commits every 100 ms): ${probe.stalls(startedAt, Date.now(), startedAt)}`,
    `worker errors (${workerErrors.length}), the last:\n${workerErrors.slice(-20).join("\n")}`,
  ].join("\n");
}

/**
 * The primary's client sessions of the test database (who, state, wait, transaction age, query), the
 * worker's last; its replication to the standby; and the outbox counts.
 */
async function sessions(): Promise<string> {
  const probe = postgres(cluster.url("primary"), { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    const rows = await probe<{ line: string }[]>`
      SELECT concat_ws(' ', application_name, pid, state, wait_event_type || ':' || wait_event,
        round(extract(epoch FROM now() - xact_start) * 1000) || ' ms', left(regexp_replace(query, '\s+', ' ', 'g'), 80)) AS line
      FROM pg_stat_activity WHERE datname = 'postel' AND pid <> pg_backend_pid()
      ORDER BY application_name = 'postel-worker', application_name, pid`;
    const replication = await probe<{ line: string }[]>`
      SELECT concat_ws(' ', 'replication:', application_name, state, sync_state, 'write lag', write_lag,
        'flush lag', flush_lag, 'replay lag', replay_lag) AS line
      FROM pg_stat_replication`;
    const [counts] = await probe<{ line: string }[]>`
      SELECT concat_ws(', ',
        (SELECT string_agg(status || ' ' || n, ' ') FROM (SELECT status, count(*) n FROM postel.messages GROUP BY 1) m),
        (SELECT string_agg(status || ' ' || n, ' ') FROM (SELECT status, count(*) n FROM postel.deliveries GROUP BY 1) d)) AS line`;
    return [
      ...rows.map((row) => row.line),
      ...replication.map((row) => row.line),
      `messages / deliveries by status: ${counts?.line}`,
    ].join("\n");
  } catch (error) {
    return `(the primary did not answer: ${String(error)})`;
  } finally {
    await probe.end({ timeout: 1 });
  }
}

/**
 * Waits until `done`, failing when nothing new arrives at the receiver for `stallMs` (a freeze) or
 * after `capMs` in all: a slow but moving drain (a loaded CI machine, every commit waiting for the
 * synchronous standby) is not what these tests are about; a stall is.
 */
async function whileDelivering(
  what: string,
  done: () => boolean,
  { stallMs, capMs }: { stallMs: number; capMs: number },
): Promise<void> {
  const started = Date.now();
  let seen = receiver.arrivals.length;
  let movedAt = started;
  while (!done()) {
    const now = Date.now();
    if (receiver.arrivals.length !== seen) {
      seen = receiver.arrivals.length;
      movedAt = now;
    }
    if (now - movedAt > stallMs) throw new Error(`no request for ${stallMs / 1000} s waiting until ${what}`);
    if (now - started > capMs) throw new Error(`still not ${what} after ${capMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * From the strike on, whenever no request has arrived for 2 s, records once per silence what the
 * primary's sessions were doing (see sessions()): what a failed gap assertion shows.
 */
function watchSilences(origin: number): { snapshots: string[]; stop(): void } {
  const snapshots: string[] = [];
  let snapshotOf = -1;
  let busy = false;
  const timer = setInterval(() => {
    const last = Math.max(origin, receiver.arrivals.at(-1)?.at ?? origin);
    if (busy || Date.now() - last < 2_000 || snapshotOf === last || snapshots.length >= 3) return;
    busy = true;
    snapshotOf = last;
    void sessions()
      .then((text) =>
        snapshots.push(
          `--- ${((Date.now() - origin) / 1000).toFixed(1)} s, silent for ${Date.now() - last} ms:\n${text}`,
        ),
      )
      .finally(() => {
        busy = false;
      });
  }, 250);
  return { snapshots, stop: () => clearInterval(timer) };
}

/**
 * Records when each of the worker's claims, outcome writes and endpoint reads started, how long it
 * took and how it ended: what a failed gap assertion shows of where the time went.
 */
function traceCalls(origin: () => number): {
  wrap(storage: PostgresStorageInstance): PostgresStorageInstance;
  between(from: number, to: number): string;
} {
  const calls: { at: number; line: string }[] = [];
  const traced = /^(claim|record|endpointsRevision|allEndpoints)/;
  return {
    wrap: (storage) =>
      new Proxy(storage, {
        get(target, key) {
          const value: unknown = Reflect.get(target, key, target);
          if (typeof value !== "function") return value;
          if (!traced.test(String(key))) return value.bind(target);
          return (...args: unknown[]) => {
            const at = Date.now();
            const pending = Promise.resolve(value.apply(target, args));
            const done = (outcome: string) =>
              calls.push({
                at,
                line: `${((at - origin()) / 1000).toFixed(2)} s +${Date.now() - at} ms ${String(key)}: ${outcome}`,
              });
            pending.then(
              () => done("ok"),
              (error: unknown) =>
                done(
                  String(error)
                    .replace(/^.*?: (?=[a-z])/i, "")
                    .slice(0, 120),
                ),
            );
            return pending;
          };
        },
      }),
    between: (from, to) =>
      calls
        .filter((call) => call.at >= from && call.at <= to)
        .sort((a, b) => a.at - b.at)
        .slice(0, 60)
        .map((call) => call.line)
        .join("\n"),
  };
}

type Strike = "stop" | "kill" | "cut";

async function strikeAndRecover(strike: Strike): Promise<void> {
  await cluster.waitForHealthy();
  await truncatePostel(admin);
  receiver.arrivals.length = 0;
  receiver.delivered.clear();
  const url = cluster.url("primary");
  // Named, so the sessions a failure lists say whose they are.
  const named = (name: string) => `${url}${url.includes("?") ? "&" : "?"}application_name=${name}`;
  let struckAt = Number.POSITIVE_INFINITY;
  const calls = traceCalls(() => struckAt);
  const options = (name: string, storage = PostgresStorage({ url: named(name) })) => ({
    outbound: { storage, http: { allowPrivateNetworks: true } },
  });
  const worker = Postel(
    options("postel-worker", calls.wrap(PostgresStorage({ url: named("postel-worker") }))),
  );
  const sending = Postel(options("postel-sender"));
  const probe = startCommitProbe(url);
  const workerErrors: string[] = [];
  let silences: ReturnType<typeof watchSilences> | undefined;
  worker.on("error", ({ context, error }) =>
    workerErrors.push(
      `${((Date.now() - struckAt) / 1000).toFixed(2)} s ${context}: ${String(error).slice(0, 200)}`,
    ),
  );
  try {
    await sending.outbound.endpoints.create({ url: receiver.url, types: ["*"] });
    const queued: string[] = [];
    for (let i = 0; i < QUEUED; i += 1_000) {
      const events = Array.from({ length: 1_000 }, (_, j) => ({ type: "order.created", data: { i: i + j } }));
      queued.push(...(await sending.outbound.sendBatch(events)).map((result) => result.id));
    }
    const startedAt = Date.now();
    await worker.start();
    const sender = startSending(sending);
    await whileDelivering("30% of the queue was delivered", () => receiver.delivered.size >= QUEUED * 0.3, {
      stallMs: 30_000,
      capMs: 240_000,
    }).catch(async (error: unknown) => {
      throw new Error(await failure(error, startedAt, workerErrors, probe));
    });

    struckAt = Date.now();
    silences = watchSilences(struckAt);
    const old = await cluster.primary();
    if (strike === "stop") await cluster.stopPrimary();
    if (strike === "kill") await cluster.killPrimary();
    if (strike === "cut") expect(await cluster.cutSessions("postel")).toBeGreaterThan(0);
    const writableAt =
      strike === "cut" ? struckAt : (await cluster.waitForWritablePrimary(60_000, old)).writableAt;
    // Sending on through the outage and a little after it.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await sender.stop();

    const expected = [...queued, ...sender.sent];
    await whileDelivering(
      `every one of ${expected.length} messages was delivered`,
      () => expected.every((id) => receiver.delivered.has(id)),
      // Longer than a lease (60 s): a claim whose COMMIT landed as its session was cut waits it out.
      { stallMs: 90_000, capMs: 240_000 },
    ).catch(async (error: unknown) => {
      throw new Error(await failure(error, startedAt, workerErrors, probe));
    });

    // Resumed within 2 s of the primary taking writes, and no freeze after: no gap between requests
    // longer than that while the backlog drained, until 95% of the messages had arrived. The rest may
    // wait: a claim whose COMMIT landed as its session was cut never reached the worker, and its
    // deliveries wait for their lease to expire (60 s, a claim of 64 at a time); a send still waiting
    // for a connection commits late and is delivered alone.
    const firstArrivals = new Map<string, number>();
    for (const arrival of receiver.arrivals) {
      if (!firstArrivals.has(arrival.webhookId)) firstArrivals.set(arrival.webhookId, arrival.at);
    }
    const sorted = [...firstArrivals.values()].sort((a, b) => a - b);
    const until = sorted[Math.floor(expected.length * 0.95) - 1] ?? Number.POSITIVE_INFINITY;
    const after = receiver.arrivals
      .map((arrival) => arrival.at)
      .filter((at) => at >= writableAt && at <= until)
      .sort((a, b) => a - b);
    const gaps = [(after[0] ?? until) - writableAt, ...after.slice(1).map((at, i) => at - after[i]!)];
    const timeline = new Map<number, number>();
    for (const arrival of receiver.arrivals) {
      const second = Math.floor((arrival.at - struckAt) / 1000);
      timeline.set(second, (timeline.get(second) ?? 0) + 1);
    }
    silences?.stop();
    const story =
      `${silences?.snapshots.join("\n") ?? ""}\n` +
      `struck at 0, writable at ${((writableAt - struckAt) / 1000).toFixed(1)} s; arrivals per second: ` +
      [...timeline]
        .sort((a, b) => a[0] - b[0])
        .map(([second, n]) => `${second}:${n}`)
        .join(" ") +
      `\nthe database's longest spans without a commit after writable: ${probe.stalls(writableAt, until, struckAt)}` +
      `\nworker errors (${workerErrors.length}), the last:\n${workerErrors.slice(-25).join("\n")}` +
      `\nthe worker's storage calls from 3 s before writable to its first delivery after:\n` +
      calls.between(writableAt - 3_000, (after[0] ?? until) + 500);
    // A gap counts only the time the database took commits: pg_auto_failover can hold every commit
    // for seconds after the first write succeeded (the old primary rejoining as the synchronous
    // standby), and the probe (a plain postgres.js client on the same URL, committing every 100 ms)
    // sees that too. CI once saw a 2,419 ms gap inside a 2,954 ms span without a probe commit.
    const stalls = probe.spansWithoutCommit(writableAt, until, PROBE_STALL_MS);
    const excused = (from: number, to: number) =>
      stalls.reduce((ms, span) => ms + Math.max(0, Math.min(to, span.to) - Math.max(from, span.from)), 0);
    const bounds = [writableAt, ...after];
    const committingGaps = gaps.map((gap, i) => gap - excused(bounds[i]!, bounds[i]! + gap));
    expect(
      Math.max(...committingGaps),
      `longest time without a delivery after writable while the database took commits ` +
        `(${Math.max(...gaps)} ms in all); ${story}`,
    ).toBeLessThanOrEqual(RESUME_WITHIN_MS);
    // Duplicates only of what was in flight at the strike.
    const repeated = [...receiver.delivered.values()].filter((times) => times > 1).length;
    expect(repeated).toBeLessThanOrEqual(IN_FLIGHT_BOUND);
    // Every failed send() says what happened, with the documented, retryable code.
    expect(sender.failures.filter((code) => code !== "STORAGE_UNAVAILABLE")).toEqual([]);
    expect(sender.pending()).toBe(0);

    // Wake-ups are back: a send from the other Postel reaches the receiver in milliseconds, not after
    // a poll (every second by default).
    const latencies: number[] = [];
    for (let i = 0; i < 20; i++) {
      const started = Date.now();
      const { id } = await sending.outbound.send({ type: "order.created", data: { wake: i } });
      await eventually("the wake-up was delivered", () => receiver.delivered.has(id), 10_000);
      latencies.push(Date.now() - started);
    }
    latencies.sort((a, b) => a - b);
    // The worker LISTENs on the new primary again (the sending Postel never started: it has no
    // listener). Latency alone cannot tell: a lost LISTEN polls every 100 ms until it is back.
    const listeners = await admin<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = 'postel' AND query ILIKE 'listen%' AND pid <> pg_backend_pid()`;
    expect(listeners[0]!.n, "a LISTEN session on the primary").toBeGreaterThanOrEqual(1);
    // And well under the 1 s poll interval a lost LISTEN would fall back to after its fast polling.
    expect(
      latencies[10]!,
      `median send → request after the strike (${latencies.join(", ")} ms)`,
    ).toBeLessThan(1_000);
    console.log(
      `${strike}: longest gap after writable ${Math.max(...gaps)} ms, ${repeated} repeated, ` +
        `${sender.failures.length} send failures of ${sender.failures.length + sender.sent.length}, ` +
        `wake-up median ${latencies[10]} ms`,
    );
  } finally {
    silences?.stop();
    await probe.stop();
    await worker.close();
    await sending.close();
  }
}

describe.each(["stop", "kill", "cut"] as const)("a failover by %s", (strike) => {
  for (let run = 1; run <= REPEATS; run++) {
    test(`run ${run}: nothing lost, delivery back within 2 s, every send() failure coded, wake-ups back`, async () => {
      await strikeAndRecover(strike);
    }, 900_000);
  }
});
