import { Postel } from "@postel/core";
import { PostgresStorage } from "@postel/storage-postgres";
import postgres from "postgres";
import { createBenchDatabase, PAYLOAD } from "../database.js";
import type { Scenario } from "../scenario.js";
import { type Metric, median, percentile } from "../stats.js";

const DATA = JSON.parse(PAYLOAD) as unknown;

async function timeSends(
  send: () => Promise<unknown>,
  count: number,
  concurrent: boolean,
): Promise<number[]> {
  const latencies: number[] = [];
  const one = async () => {
    const started = performance.now();
    await send();
    latencies.push(performance.now() - started);
  };
  if (concurrent) await Promise.all(Array.from({ length: count }, one));
  else for (let i = 0; i < count; i++) await one();
  return latencies;
}

/**
 * `send()` latency with no worker running: one caller awaiting each send in turn, and 10,000 calls
 * issued at once through the application's 20-connection pool (each call timed from its issue).
 */
export const sendLatency: Scenario = {
  name: "send-latency",
  storage: "postgres",
  description:
    "send() latency: one caller p50/p99 (p99 ≤ 5 ms); 10,000 concurrent through 20 connections (p99 ≤ 500 ms)",
  async run({ scale, log }) {
    const database = await createBenchDatabase();
    const pool = postgres(database.url, { max: 20, onnotice: () => {} });
    const postel = Postel({ outbound: { storage: PostgresStorage({ sql: pool }, { migrate: false }) } });
    const send = () => postel.outbound.send({ type: "order.created", data: DATA });
    try {
      await timeSends(send, 200, false); // warm the pool and the prepared statements
      const p50: number[] = [];
      const p99: number[] = [];
      const concurrentP99: number[] = [];
      const rate: number[] = [];
      for (let run = 1; run <= scale.runs; run++) {
        const sequential = await timeSends(send, scale.sequentialSends, false);
        p50.push(percentile(sequential, 50));
        p99.push(percentile(sequential, 99));
        const started = performance.now();
        const concurrent = await timeSends(send, scale.concurrentSends, true);
        rate.push((scale.concurrentSends / (performance.now() - started)) * 1000);
        concurrentP99.push(percentile(concurrent, 99));
        log(
          `  run ${run}/${scale.runs}: one caller p50 ${p50.at(-1)?.toFixed(2)} ms, p99 ${p99.at(-1)?.toFixed(2)} ms; ` +
            `${scale.concurrentSends.toLocaleString("en-US")} concurrent p99 ${concurrentP99.at(-1)?.toFixed(0)} ms ` +
            `(${Math.round(rate.at(-1) ?? 0).toLocaleString("en-US")} sends/s)`,
        );
      }
      const metric = (name: string, unit: string, runs: number[], target?: Metric["target"]): Metric => ({
        scenario: "send-latency",
        name,
        unit,
        postel: median(runs),
        postelRuns: runs,
        ...(target ? { target } : {}),
      });
      const n = scale.concurrentSends.toLocaleString("en-US");
      return [
        metric("one caller p50", "ms", p50),
        metric("one caller p99", "ms", p99, { op: "<=", value: 5 }),
        metric(`${n} concurrent, 20 connections, p99`, "ms", concurrentP99, { op: "<=", value: 500 }),
        metric(`${n} concurrent, 20 connections, throughput`, "sends/s", rate),
      ];
    } finally {
      await pool.end({ timeout: 5 });
      await database.drop();
    }
  },
};
