import { Postel } from "@postel/core";
import { SqliteStorage } from "@postel/storage-sqlite";
import { PAYLOAD } from "../database.js";
import type { Synchronous } from "../protocol.js";
import type { Scenario } from "../scenario.js";
import { createBenchFile } from "../sqlite-file.js";
import { type Metric, median, percentile } from "../stats.js";

const DATA = JSON.parse(PAYLOAD) as unknown;
const WARM_UP = 200;

/** One run on a fresh file: warm up, then time `count` sequential sends of one caller. */
async function sequentialSends(count: number, synchronous: Synchronous): Promise<number[]> {
  const file = await createBenchFile({ migrate: true });
  const postel = Postel({ outbound: { storage: SqliteStorage({ url: file.url }, { synchronous }) } });
  try {
    const send = () => postel.outbound.send({ type: "order.created", data: DATA });
    for (let i = 0; i < WARM_UP; i++) await send();
    const latencies: number[] = [];
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      await send();
      latencies.push(performance.now() - started);
    }
    return latencies;
  } finally {
    await postel.close();
    await file.remove();
  }
}

/**
 * `send()` latency of one caller on a SQLite file (no worker running), with `synchronous=full`
 * (Postel's default: one fsync per commit) and `normal`.
 */
export const sqliteSendLatency: Scenario = {
  name: "sqlite-send-latency",
  storage: "sqlite",
  description: "send() latency of one caller on a SQLite file, synchronous full then normal (p99 ≤ 2 ms)",
  async run({ scale, log }) {
    const metrics: Metric[] = [];
    for (const synchronous of ["full", "normal"] as const) {
      const at = { p50: [] as number[], p90: [] as number[], p99: [] as number[] };
      for (let run = 1; run <= scale.runs; run++) {
        const latencies = await sequentialSends(scale.sequentialSends, synchronous);
        at.p50.push(percentile(latencies, 50));
        at.p90.push(percentile(latencies, 90));
        at.p99.push(percentile(latencies, 99));
        log(
          `  synchronous=${synchronous} run ${run}/${scale.runs}: p50 ${at.p50.at(-1)?.toFixed(2)} ms, ` +
            `p90 ${at.p90.at(-1)?.toFixed(2)} ms, p99 ${at.p99.at(-1)?.toFixed(2)} ms, max ${Math.max(...latencies).toFixed(2)} ms`,
        );
      }
      for (const p of ["p50", "p90", "p99"] as const) {
        metrics.push({
          scenario: "sqlite-send-latency",
          name: `one caller ${p}, synchronous=${synchronous}`,
          unit: "ms",
          postel: median(at[p]),
          postelRuns: at[p],
          ...(p === "p99" ? { target: { op: "<=", value: 2 } as const } : {}),
        });
      }
    }
    return metrics;
  },
};
