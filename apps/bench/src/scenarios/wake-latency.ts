import { Child } from "../children.js";
import { createBenchDatabase } from "../database.js";
import { createEndpoints, startReceiver } from "../drain-run.js";
import type { SenderCommand, SenderReport, WorkerCommand, WorkerConfig, WorkerReport } from "../protocol.js";
import type { Scenario, ScenarioContext } from "../scenario.js";
import { type Metric, median, percentile } from "../stats.js";

/** One run: an idle worker process, a sender process, the receiver; returns per-message latencies. */
async function measureOnce(
  { scale }: ScenarioContext,
  base: string,
  receiver: Awaited<ReturnType<typeof startReceiver>>["receiver"],
) {
  const database = await createBenchDatabase();
  const children: { kill(): Promise<void> }[] = [];
  try {
    await createEndpoints(database, base, 1);
    receiver.send({ type: "reset", recordArrivals: true });
    await receiver.next("stats", 10_000);
    const workerConfig: WorkerConfig = { url: database.url, target: 0, concurrency: 64 };
    const worker = Child.start<WorkerReport, WorkerCommand>("postel-worker", workerConfig);
    children.push(worker);
    await worker.next("ready", 30_000);
    worker.send({ type: "go" });
    await worker.next("started", 30_000);
    const sender = Child.start<SenderReport, SenderCommand>("sender", {
      url: database.url,
      count: scale.wakeups,
      intervalMs: 20,
    });
    children.push(sender);
    await sender.next("ready", 30_000);
    sender.send({ type: "go" });
    const { commits } = await sender.next("sent", 5 * 60_000);
    const deadline = Date.now() + 30_000;
    for (;;) {
      receiver.send({ type: "stats" });
      const { arrivals } = await receiver.next("stats", 10_000);
      const arrived = new Map(arrivals);
      if (commits.every(([id]) => arrived.has(id)) || Date.now() > deadline) {
        return commits.flatMap(([id, committed]) => {
          const at = arrived.get(id);
          return at === undefined ? [] : [at - committed];
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    for (const child of children) await child.kill();
    await database.drop();
  }
}

/**
 * Commit → first HTTP request at the receiver, across processes: a sender process commits one
 * message at a time while a separate, idle worker process is woken by LISTEN/NOTIFY.
 */
export const wakeLatency: Scenario = {
  name: "wake-latency",
  storage: "postgres",
  description:
    "commit → first request at the receiver, sender and worker in separate processes (p50 ≤ 10 ms, p99 ≤ 50 ms)",
  async run(context) {
    const { scale, log } = context;
    const { receiver, base } = await startReceiver(true);
    try {
      const p50: number[] = [];
      const p99: number[] = [];
      for (let run = 1; run <= scale.runs; run++) {
        const latencies = await measureOnce(context, base, receiver);
        p50.push(percentile(latencies, 50));
        p99.push(percentile(latencies, 99));
        log(
          `  run ${run}/${scale.runs}: ${latencies.length}/${scale.wakeups} arrived, p50 ${p50.at(-1)?.toFixed(1)} ms, ` +
            `p99 ${p99.at(-1)?.toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`,
        );
      }
      const metric = (name: string, runs: number[], value: number): Metric => ({
        scenario: "wake-latency",
        name,
        unit: "ms",
        postel: median(runs),
        postelRuns: runs,
        target: { op: "<=", value },
      });
      return [metric("commit → request p50", p50, 10), metric("commit → request p99", p99, 50)];
    } finally {
      await receiver.kill();
    }
  },
};
