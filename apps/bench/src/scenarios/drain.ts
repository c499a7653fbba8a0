import {
  type DrainMeasurement,
  drainMinimal,
  drainNaive,
  drainWithPostel,
  startReceiver,
} from "../drain-run.js";
import { databaseCostRows, figures } from "../database-cost.js";
import type { Scenario, ScenarioContext } from "../scenario.js";
import { type Metric, median } from "../stats.js";

/** Issue 15's targets for the single-endpoint drain, with Postel's default configuration. */
const DRAIN_TARGETS = {
  /** WAL bytes per delivery without full-page images, from a CHECKPOINT at the start. */
  wal: { op: "<=", value: 1_250 },
  /** PostgreSQL backends' CPU ms per 1,000 deliveries. */
  cpu: { op: "<=", value: 25 },
} as const;

async function drainScenario(
  context: ScenarioContext,
  name: string,
  messages: number,
  endpoints: number,
): Promise<Metric[]> {
  const { scale, log } = context;
  const { receiver, base } = await startReceiver();
  try {
    const postel: DrainMeasurement[] = [];
    const naive: DrainMeasurement[] = [];
    const minimal: DrainMeasurement[] = [];
    for (let run = 1; run <= scale.runs; run++) {
      postel.push(
        await drainWithPostel(base, {
          messages,
          endpoints,
          log,
          receiver,
          label: `Postel run ${run}/${scale.runs}`,
        }),
      );
      const naiveMessages = Math.max(1, Math.round(scale.naiveMessages / endpoints));
      naive.push(
        await drainNaive(base, {
          messages: naiveMessages,
          endpoints,
          log,
          receiver,
          label: `naive run ${run}/${scale.runs}`,
        }),
      );
      // One endpoint only: the minimal loop has no fan-out.
      if (endpoints === 1) {
        minimal.push(
          await drainMinimal(base, {
            messages,
            endpoints,
            log,
            receiver,
            label: `minimal loop run ${run}/${scale.runs}`,
          }),
        );
      }
    }
    const drains = { postel, naive, ...(minimal.length > 0 ? { minimal } : {}) };
    return [
      {
        scenario: name,
        name: `${(messages * endpoints).toLocaleString("en-US")} deliveries, ${endpoints} endpoint${endpoints > 1 ? "s" : ""}`,
        unit: "deliveries/s",
        ...figures(drains, (m) => m.perSecond),
        // Issue 4's target; its ≥ 10× the naive loop is retired (issue 15): the × baseline column stays.
        ...(endpoints === 1 ? ({ target: { op: ">=", value: 5_000 } } as const) : {}),
        note:
          `naive drains ${naive[0]?.deliveries.toLocaleString("en-US")} deliveries per run (its rate does not depend on N)` +
          (minimal.length > 0
            ? "; minimal loop: claim 64 rows, sign, POST (undici), mark delivered in batches, nothing else (src/minimal-worker.ts)"
            : "") +
          `; CPU ms per 1,000 deliveries, median, worker / PostgreSQL / receiver: Postel ${cpuOf(postel)}, ` +
          `naive ${cpuOf(naive)}${minimal.length > 0 ? `, minimal loop ${cpuOf(minimal)}` : ""}`,
      },
      ...databaseCostRows(name, "", drains, endpoints === 1 ? DRAIN_TARGETS : undefined),
    ] satisfies Metric[];
  } finally {
    await receiver.kill();
  }
}

/** Median CPU per 1,000 deliveries of each party, as `worker / database / receiver`. */
function cpuOf(runs: DrainMeasurement[]): string {
  const part = (key: keyof DrainMeasurement["cpuPer1k"]) =>
    Math.round(median(runs.map((m) => m.cpuPer1k[key]))).toLocaleString("en-US");
  return `${part("worker")} / ${part("database")} / ${part("receiver")}`;
}

/** Drain of N pre-enqueued messages to one endpoint, Postel vs the naive loop. */
export const drain: Scenario = {
  name: "drain",
  storage: "postgres",
  description:
    "drain pre-enqueued messages to one endpoint (≥ 5,000/s; WAL ≤ 1,250 B per delivery without FPI, PostgreSQL CPU ≤ 25 ms per 1,000)",
  run: (context) => drainScenario(context, "drain", context.scale.drainMessages, 1),
};

/** The same with 10 endpoints: every message fans out to all of them. */
export const fanout: Scenario = {
  name: "fanout",
  storage: "postgres",
  description: "drain with fan-out to 10 endpoints (WAL and PostgreSQL CPU per delivery reported, no target)",
  run: (context) => drainScenario(context, "fanout", context.scale.fanoutMessages, 10),
};
