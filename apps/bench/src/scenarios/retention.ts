import { Postel, type PruneResult, type Storage } from "@postel/core";
import type { RetentionStore } from "@postel/core/storage";
import { PostgresStorage } from "@postel/storage-postgres";
import { SqliteStorage } from "@postel/storage-sqlite";
import { type BenchDatabase, createBenchDatabase, seedHistory } from "../database.js";
import {
  createEndpoints,
  type DrainMeasurement,
  drainWithPostel,
  type Receiver,
  startReceiver,
} from "../drain-run.js";
import type { PostelWorkerConfig } from "../protocol.js";
import type { Scenario, ScenarioContext } from "../scenario.js";
import { createSqliteEndpoint, drainSqliteWithPostel } from "../sqlite-drain-run.js";
import { type BenchFile, createBenchFile, seedSqliteHistory } from "../sqlite-file.js";
import { type Metric, median, percentile } from "../stats.js";

// The workers' retention as an application would set it, except the interval: a pass starts about a
// second after start() and, the history being far larger than a drain, runs through the whole drain.
const RETENTION: NonNullable<PostelWorkerConfig["retention"]> = { maxAge: "1d", interval: "1s" };

const DAY = 86_400_000;
/** The health-bucket pass: endpoints with 12 hours of 10-second buckets each, half before the cutoff. */
const HEALTH_BUCKETS_EACH = 4_320;
/** Retention's default `batchSize`, which the pass also deletes health buckets by. */
const BATCH = 500;

/** How one storage is set up for the scenario. */
interface RetentionBench {
  storage: "postgres" | "sqlite";
  /** Empties the history tables and seeds `rows` finished messages, a month old. */
  reseed(rows: number): Promise<void>;
  /** Finished history rows (messages) left. */
  historyLeft(): Promise<number>;
  /** A storage on the database, for `prune()` in this process. */
  openStorage(): Storage<unknown>;
  drain(options: { run: number; retention: boolean; label: string }): Promise<DrainMeasurement>;
  /** Adds `endpoints` endpoints (ids `ep_health…`) with `HEALTH_BUCKETS_EACH` buckets each, centred on `cutoff`. */
  seedHealth(endpoints: number, cutoff: number): Promise<void>;
  /** Deletes those endpoints and whatever buckets of theirs are left. */
  dropHealth(): Promise<void>;
}

/**
 * (c) The health buckets' part of a pass on its own: `pruneHealth` batch after batch, as the pass
 * runs it after the messages, over `endpoints` × 4,320 buckets of which half are old.
 */
async function timedHealthPass(
  bench: RetentionBench,
  endpoints: number,
  log: (line: string) => void,
): Promise<{ deleted: number; ms: number; batchMs: number[] }> {
  const cutoff = Date.now() - DAY;
  await bench.seedHealth(endpoints, cutoff);
  const storage = bench.openStorage();
  // A baseline build (--baseline) from before storage capabilities has the verb on the storage itself.
  const retention =
    (storage as { retention?: RetentionStore }).retention ?? (storage as unknown as RetentionStore);
  try {
    const batchMs: number[] = [];
    let deleted = 0;
    const started = performance.now();
    for (let gone = BATCH; gone === BATCH; ) {
      const batchStarted = performance.now();
      gone = await retention.pruneHealth({ startedBefore: cutoff, limit: BATCH });
      batchMs.push(performance.now() - batchStarted);
      deleted += gone;
    }
    const ms = performance.now() - started;
    log(
      `  health pass: ${deleted.toLocaleString("en-US")} buckets of ${endpoints} endpoints in ${(ms / 1000).toFixed(1)} s, ` +
        `${Math.round((deleted / ms) * 1000).toLocaleString("en-US")} buckets/s`,
    );
    return { deleted, ms, batchMs };
  } finally {
    await storage.close();
    await bench.dropHealth();
  }
}

/** (a) One full pass over the seeded history, timed in this process (the default batch size). */
async function timedPass(
  bench: RetentionBench,
  log: (line: string) => void,
): Promise<PruneResult & { ms: number }> {
  const postel = Postel({ outbound: { storage: bench.openStorage() } });
  try {
    const started = performance.now();
    const result = await postel.outbound.prune({ olderThan: RETENTION.maxAge });
    const ms = performance.now() - started;
    const rows = result.messages + result.deliveries + result.attempts;
    log(
      `  full pass: ${result.messages.toLocaleString("en-US")} messages (${rows.toLocaleString("en-US")} rows) in ` +
        `${(ms / 1000).toFixed(1)} s, ${Math.round((rows / ms) * 1000).toLocaleString("en-US")} rows/s`,
    );
    return { ...result, ms };
  } finally {
    await postel.close();
  }
}

/**
 * Per run: seed the history and time a full prune pass; seed it again and drain fresh messages
 * without retention, then with the worker's own retention pruning beside the drain.
 */
async function measure(bench: RetentionBench, { scale, log }: ScenarioContext): Promise<Metric[]> {
  const rows = scale.historyRows.toLocaleString("en-US");
  const scenario = bench.storage === "postgres" ? "retention" : "sqlite-retention";
  const passes: (PruneResult & { ms: number })[] = [];
  const without: DrainMeasurement[] = [];
  const beside: DrainMeasurement[] = [];
  const prunedDuringDrain: number[] = [];
  const healthPasses: Awaited<ReturnType<typeof timedHealthPass>>[] = [];
  const healthEndpoints = scale.quick ? 20 : 200;
  for (let run = 1; run <= scale.runs; run++) {
    const seeded = performance.now();
    await bench.reseed(scale.historyRows);
    log(
      `  run ${run}/${scale.runs}: seeded ${rows} finished messages in ${Math.round((performance.now() - seeded) / 1000)} s`,
    );
    passes.push(await timedPass(bench, log));
    await bench.reseed(scale.historyRows);
    without.push(await bench.drain({ run, retention: false, label: `drain without retention run ${run}` }));
    const before = await bench.historyLeft();
    beside.push(await bench.drain({ run, retention: true, label: `drain beside the prune run ${run}` }));
    prunedDuringDrain.push(before - (await bench.historyLeft()));
    healthPasses.push(await timedHealthPass(bench, healthEndpoints, log));
  }
  const bucketsPerSecond = healthPasses.map((p) => (p.deleted / p.ms) * 1000);
  const batchMs = healthPasses.flatMap((p) => p.batchMs);
  const rowsPerSecond = passes.map((p) => ((p.messages + p.deliveries + p.attempts) / p.ms) * 1000);
  const messagesPerSecond = passes.map((p) => (p.messages / p.ms) * 1000);
  const withoutRuns = without.map((m) => m.perSecond);
  const besideRuns = beside.map((m) => m.perSecond);
  const ratioRuns = besideRuns.map((value, i) => value / withoutRuns[i]!);
  return [
    {
      scenario,
      name: `full prune pass over ${rows} finished messages`,
      unit: "rows deleted/s",
      postel: median(rowsPerSecond),
      postelRuns: rowsPerSecond,
      note:
        `messages, deliveries and attempts; ${Math.round(median(messagesPerSecond)).toLocaleString("en-US")} ` +
        `messages/s; a pass took ${(median(passes.map((p) => p.ms)) / 1000).toFixed(1)} s (median)`,
    },
    {
      scenario,
      name: `health buckets of ${healthEndpoints} endpoints × ${HEALTH_BUCKETS_EACH.toLocaleString("en-US")}, half old`,
      unit: "buckets deleted/s",
      postel: median(bucketsPerSecond),
      postelRuns: bucketsPerSecond,
      note:
        `pruneHealth in batches of ${BATCH}: ${median(healthPasses.map((p) => p.deleted)).toLocaleString("en-US")} ` +
        `deleted a pass; a batch took ${median(batchMs).toFixed(1)} ms (median), ${percentile(batchMs, 95).toFixed(1)} ms (p95)`,
    },
    {
      scenario,
      name: "drain without retention",
      unit: "deliveries/s",
      postel: median(withoutRuns),
      postelRuns: withoutRuns,
    },
    {
      scenario,
      name: "drain while the worker prunes the history",
      unit: "deliveries/s",
      postel: median(besideRuns),
      postelRuns: besideRuns,
      note: `the worker's retention deleted ${Math.round(median(prunedDuringDrain)).toLocaleString("en-US")} messages during the drain (median)`,
    },
    {
      scenario,
      name: "while pruning ÷ without",
      unit: "ratio",
      postel: median(ratioRuns),
      postelRuns: ratioRuns,
      note: "runs alternate without / with retention over the same seeded history",
    },
  ];
}

function postgresBench(
  database: BenchDatabase,
  base: string,
  receiver: Receiver,
  log: (line: string) => void,
  scale: ScenarioContext["scale"],
): RetentionBench {
  const { sql } = database;
  return {
    storage: "postgres",
    async reseed(rows) {
      await sql`TRUNCATE postel.messages, postel.deliveries, postel.attempts`;
      const [endpoint] = await sql<{ id: string }[]>`SELECT id FROM postel.endpoints`;
      // `msg_00hist…` sorts below the ids of messages made this century: retention's walk reaches it.
      await seedHistory(sql, rows, { endpointIds: [endpoint!.id], prefix: "msg_00hist" });
    },
    async historyLeft() {
      const [row] = await sql<
        { n: number }[]
      >`SELECT count(*)::int AS n FROM postel.messages WHERE id < 'msg_01'`;
      return row!.n;
    },
    openStorage: () => PostgresStorage({ url: database.url }, { migrate: false }),
    async seedHealth(endpoints, cutoff) {
      await sql`
        INSERT INTO postel.endpoints (id, url, types, headers, metadata, state, created_at, updated_at)
        SELECT 'ep_health' || lpad(e::text, 4, '0'), 'https://hooks.example.com/health', '["*"]', '{}', '{}',
          'enabled', 0, 0
        FROM generate_series(1, ${endpoints}::int) e`;
      // In time order, as workers add them.
      await sql`
        INSERT INTO postel.endpoint_health (endpoint_id, bucket_start, attempts, failures)
        SELECT 'ep_health' || lpad(e::text, 4, '0'), ${cutoff}::bigint + (b - ${HEALTH_BUCKETS_EACH / 2}::int) * 10000, 3, 0
        FROM generate_series(0, ${HEALTH_BUCKETS_EACH - 1}::int) b, generate_series(1, ${endpoints}::int) e
        ORDER BY b, e`;
      await sql`VACUUM ANALYZE postel.endpoint_health`;
    },
    async dropHealth() {
      await sql`DELETE FROM postel.endpoint_health WHERE endpoint_id LIKE 'ep_health%'`;
      await sql`DELETE FROM postel.endpoints WHERE id LIKE 'ep_health%'`;
    },
    drain: ({ run, retention, label }) =>
      drainWithPostel(base, {
        messages: scale.drainMessages,
        endpoints: 1,
        log,
        receiver,
        database,
        prefix: `msg_run${run}_${retention ? "on" : "off"}_`,
        label,
        ...(retention ? { worker: { retention: RETENTION } } : {}),
      }),
  };
}

function sqliteBench(
  file: BenchFile,
  base: string,
  receiver: Receiver,
  log: (line: string) => void,
  scale: ScenarioContext["scale"],
): RetentionBench {
  return {
    storage: "sqlite",
    async reseed(rows) {
      await file.client.batch(
        ["DELETE FROM postel_attempts", "DELETE FROM postel_deliveries", "DELETE FROM postel_messages"],
        "write",
      );
      const endpoint = await file.client.execute("SELECT id FROM postel_endpoints");
      await seedSqliteHistory(file.client, rows, String(endpoint.rows[0]!["id"]));
    },
    async historyLeft() {
      const result = await file.client.execute(
        "SELECT count(*) AS n FROM postel_messages WHERE id < 'msg_01'",
      );
      return Number(result.rows[0]!["n"]);
    },
    openStorage: () => SqliteStorage({ url: file.url }, { migrate: false }),
    async seedHealth(endpoints, cutoff) {
      const series = (name: string, last: number) =>
        `${name}(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM ${name} WHERE n < ${last})`;
      await file.client.batch(
        [
          `WITH RECURSIVE ${series("e", endpoints)}
           INSERT INTO postel_endpoints (id, url, types, headers, metadata, state, created_at, updated_at)
           SELECT 'ep_health' || substr('0000' || n, -4), 'https://hooks.example.com/health', '["*"]', '{}', '{}',
             'enabled', 0, 0
           FROM e WHERE n >= 1`,
          // In time order, as workers add them.
          {
            sql: `WITH RECURSIVE ${series("b", HEALTH_BUCKETS_EACH - 1)}
              INSERT INTO postel_endpoint_health (endpoint_id, bucket_start, attempts, failures)
              SELECT p.id, :cutoff + (b.n - ${HEALTH_BUCKETS_EACH / 2}) * 10000, 3, 0
              FROM b CROSS JOIN (SELECT id FROM postel_endpoints WHERE id LIKE 'ep_health%') p
              ORDER BY b.n, p.id`,
            args: { cutoff },
          },
        ],
        "write",
      );
    },
    async dropHealth() {
      await file.client.batch(
        [
          "DELETE FROM postel_endpoint_health WHERE endpoint_id LIKE 'ep_health%'",
          "DELETE FROM postel_endpoints WHERE id LIKE 'ep_health%'",
        ],
        "write",
      );
    },
    drain: ({ run, retention, label }) =>
      drainSqliteWithPostel(base, {
        messages: scale.sqliteDrainMessages,
        synchronous: "full",
        log,
        receiver,
        file,
        prefix: `msg_run${run}_${retention ? "on" : "off"}_`,
        label,
        ...(retention ? { retention: RETENTION } : {}),
      }),
  };
}

/** Retention on PostgreSQL: a full prune pass over a million finished messages, and the drain beside it. */
export const retention: Scenario = {
  name: "retention",
  storage: "postgres",
  description:
    "prune pass over 1,000,000 finished messages (rows/s), and the drain while the worker prunes vs without",
  async run(context) {
    const { receiver, base } = await startReceiver();
    const database = await createBenchDatabase();
    try {
      await createEndpoints(database, base, 1);
      return await measure(postgresBench(database, base, receiver, context.log, context.scale), context);
    } finally {
      await database.drop();
      await receiver.kill();
    }
  },
};

/** Retention on a SQLite file: the same measurements, under SQLite's single writer. */
export const sqliteRetention: Scenario = {
  name: "sqlite-retention",
  storage: "sqlite",
  description:
    "prune pass over 1,000,000 finished messages on a SQLite file, and the drain while the worker prunes vs without",
  async run(context) {
    const { receiver, base } = await startReceiver();
    const file = await createBenchFile({ migrate: true });
    try {
      await createSqliteEndpoint(file, base);
      return await measure(sqliteBench(file, base, receiver, context.log, context.scale), context);
    } finally {
      await file.remove();
      await receiver.kill();
    }
  },
};
