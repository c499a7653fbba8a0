import { databaseCostRows } from "../database-cost.js";
import { createBenchDatabase, seedMessages } from "../database.js";
import {
  createEndpointsAt,
  type DrainMeasurement,
  postgresMeter,
  type Receiver,
  startEndpoints,
  timeWorker,
} from "../drain-run.js";
import type { PostelWorkerConfig } from "../protocol.js";
import type { Scenario, ScenarioContext } from "../scenario.js";
import { type Metric, median } from "../stats.js";

const ENDPOINTS = 100;
const ANSWER_MS = 100;

/**
 * One drain: a fresh database with 100 endpoints, endpoint `n` subscribed to type `t.<n>` only, and
 * the messages pre-enqueued round-robin over those types (each matches exactly one endpoint); one
 * Postel worker process, timed until every delivery is recorded.
 */
async function drainOnce(
  { scale, log }: ScenarioContext,
  receiver: Receiver,
  urls: string[],
  concurrency: number | undefined,
  label: string,
): Promise<DrainMeasurement> {
  const database = await createBenchDatabase();
  try {
    const types = urls.map((_, n) => `t.${n}`);
    await createEndpointsAt(
      database,
      urls.map((url, n) => ({ url, types: [types[n]!] })),
    );
    await seedMessages(database.sql, scale.latencyMessages, "msg_bench", types);
    const config: PostelWorkerConfig = {
      url: database.url,
      target: scale.latencyMessages,
      ...(concurrency === undefined ? {} : { concurrency }),
    };
    return await timeWorker("postel-worker", config, { label, log, receiver }, postgresMeter(database));
  } finally {
    await database.drop();
  }
}

/**
 * Throughput when receivers take 100 ms to answer (issue 13): 100 endpoints, each its own server, with
 * Postel's default settings and, as the reference, with `workers.concurrency` 1,024.
 */
export const latency: Scenario = {
  name: "latency",
  storage: "postgres",
  description: `drain to ${ENDPOINTS} endpoints that answer in ${ANSWER_MS} ms, default settings (≥ 5,000/s)`,
  async run(context) {
    const { scale } = context;
    const { receiver, urls } = await startEndpoints(
      Array.from({ length: ENDPOINTS }, () => ({
        respond: { kind: "delay", ms: ANSWER_MS },
        record: "count",
      })),
    );
    try {
      const defaultDrains: DrainMeasurement[] = [];
      const wideDrains: DrainMeasurement[] = [];
      for (let run = 1; run <= scale.runs; run++) {
        const label = (what: string) => `${what} run ${run}/${scale.runs}`;
        defaultDrains.push(await drainOnce(context, receiver, urls, undefined, label("defaults")));
        wideDrains.push(await drainOnce(context, receiver, urls, 1_024, label("concurrency 1,024")));
      }
      const defaults = defaultDrains.map((m) => m.perSecond);
      const wide = wideDrains.map((m) => m.perSecond);
      const n = scale.latencyMessages.toLocaleString("en-US");
      return [
        {
          scenario: "latency",
          name: `${n} messages to ${ENDPOINTS} endpoints answering in ${ANSWER_MS} ms, defaults`,
          unit: "deliveries/s",
          postel: median(defaults),
          postelRuns: defaults,
          target: { op: ">=", value: 5_000 },
        },
        {
          scenario: "latency",
          name: `the same, workers.concurrency 1,024`,
          unit: "deliveries/s",
          postel: median(wide),
          postelRuns: wide,
          note:
            `each message matches exactly one endpoint (type t.<n>), each endpoint its own port; ` +
            "runs alternate defaults / concurrency 1,024; the WAL and CPU rows' baseline is concurrency 1,024",
        },
        ...databaseCostRows("latency", "defaults: ", { postel: defaultDrains, naive: wideDrains }),
      ] satisfies Metric[];
    } finally {
      await receiver.kill();
    }
  },
};
