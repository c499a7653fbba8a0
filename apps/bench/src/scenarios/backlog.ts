import { ManualClock, Postel } from "@postel/core";
import { PostgresStorage } from "@postel/storage-postgres";
import postgres from "postgres";
import { type BenchDatabase, createBenchDatabase } from "../database.js";
import { DOWN, seedOutage } from "../outage.js";
import type { Scenario, ScenarioContext } from "../scenario.js";
import type { Metric } from "../stats.js";
import { dashboardPages, pageCalls, type TimedCall, timeCalls } from "./dashboard.js";

const TARGET_MS = 50;
/** Time spent on one call per run at most (see `timeCalls`): before ANALYZE a call can take a minute. */
const BUDGET_MS = 20_000;

/**
 * Issue 28: `stats()` and the dashboard's pages during an outage, beside 1,000,000 pending deliveries
 * (≤ 50 ms p95), on two table states: the backlog before any ANALYZE has seen it (the statistics are
 * the history's), then after VACUUM ANALYZE.
 */
export const backlog: Scenario = {
  name: "backlog",
  storage: "postgres",
  description: "stats() and dashboard pages beside 1,000,000 pending deliveries of an outage (p95 ≤ 50 ms)",
  async run(context) {
    const { scale, log } = context;
    const database = await createBenchDatabase();
    try {
      const started = Date.now();
      // The clock stops at the seed's moment: what is due and what is scheduled stays the same for
      // every run and both table states, and the last health bucket stays the current one.
      const clock = new ManualClock(started);
      const endpointIds = await seedOutage(database, scale.backlogDeliveries, started, log);
      log(`  seeded in ${Math.round((Date.now() - started) / 1000)} s`);
      // One run before ANALYZE: its slowest calls take a minute each.
      const once = { ...context, scale: { ...scale, runs: 1 } };
      const metrics = await timeState(once, database, "before ANALYZE", endpointIds, clock);
      const analysed = Date.now();
      await database.sql`VACUUM ANALYZE postel.messages, postel.deliveries, postel.attempts, postel.endpoint_health`;
      log(`  VACUUM ANALYZE in ${Math.round((Date.now() - analysed) / 1000)} s`);
      metrics.push(...(await timeState(context, database, "analysed", endpointIds, clock)));
      return metrics;
    } finally {
      await database.drop();
    }
  },
};

/** Times `stats()` and the pages on the tables as they are now, through a pool of its own. */
async function timeState(
  context: ScenarioContext,
  database: BenchDatabase,
  state: string,
  endpointIds: string[],
  clock: ManualClock,
): Promise<Metric[]> {
  context.log(`  ${state}:`);
  // The application's pool, as an app mounting the dashboard would share it.
  const pool = postgres(database.url, { max: 10, onnotice: () => {} });
  try {
    const postel = Postel({
      clock,
      outbound: { storage: PostgresStorage({ sql: pool }, { migrate: false }) },
    });
    const { outbound } = postel;
    const busiest = endpointIds[DOWN]!;
    const calls: TimedCall[] = [
      { name: "stats()", targetMs: TARGET_MS, call: () => outbound.stats() },
      {
        name: "stats({ endpointId }), the busiest",
        targetMs: TARGET_MS,
        call: () => outbound.stats({ endpointId: busiest }),
      },
      // Reported only: what the cap saves.
      { name: "stats({ exact: true })", call: () => outbound.stats({ exact: true }) },
      ...pageCalls(
        postel,
        [
          ...(await dashboardPages(postel, endpointIds)),
          { name: "failed deliveries, first page", path: "/dead-letters?status=failed" },
          { name: "the busiest endpoint", path: `/endpoints/${busiest}` },
        ],
        TARGET_MS,
        clock,
      ),
    ];
    return await timeCalls(
      context,
      "backlog",
      calls.map((c) => ({ ...c, name: `${state}: ${c.name}` })),
      BUDGET_MS,
    );
  } finally {
    await pool.end({ timeout: 5 });
  }
}
