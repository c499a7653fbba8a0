import { type FailoverCluster, startFailoverCluster } from "@postel/failover-cluster";
import { migrate } from "@postel/storage-postgres";
import postgres, { type Sql } from "postgres";
import { Child } from "../children.js";
import { seedMessages } from "../database.js";
import { createEndpointsAt, type Receiver, startReceiver } from "../drain-run.js";
import type {
  PostelWorkerConfig,
  SenderCommand,
  SenderConfig,
  SenderReport,
  WorkerCommand,
  WorkerReport,
} from "../protocol.js";
import type { Scenario, ScenarioContext } from "../scenario.js";
import { type Metric, median, percentile } from "../stats.js";

// Issue 24: a worker process drains a queue on a real pg_auto_failover pair (monitor, primary and
// synchronous standby on 127.0.0.1, failing over in 5-9 s: see @postel/failover-cluster) while a
// sender process commits a message every 5 ms, on the multi-host URL with Postel's defaults. At 30%
// of the drain the primary is stopped cleanly, or nothing happens (the same run without a failover,
// its reference, alternating). Measured: how long after the new primary took its first write the
// next request reached the receiver, and commit → request latency of what was sent after it.

const SEND_INTERVAL_MS = 5;
// How long the sender goes on after the new primary took writes.
const AFTER_MS = 5_000;

interface RunResult {
  /** From the first committed write on the new primary (or the no-failover mark) to the next request. */
  silentMs: number;
  /** Commit → first request of the messages committed after that moment. */
  latencies: number[];
  failedSends: number;
}

async function runOnce(
  { log }: ScenarioContext,
  cluster: FailoverCluster,
  admin: Sql,
  receiver: Receiver,
  base: string,
  queued: number,
  failover: boolean,
): Promise<RunResult> {
  await cluster.waitForHealthy();
  await admin`TRUNCATE postel.messages, postel.deliveries, postel.attempts, postel.endpoints,
    postel.endpoint_secrets, postel.endpoint_health RESTART IDENTITY`;
  await createEndpointsAt({ sql: admin }, [{ url: `${base}/hooks/0`, types: ["*"] }]);
  await seedMessages(admin, queued);
  receiver.send({ type: "reset", recordArrivals: true });
  await receiver.next("stats", 10_000);
  const url = cluster.url("primary");
  const worker = Child.start<WorkerReport, WorkerCommand>("postel-worker", {
    url,
    target: 0,
  } satisfies PostelWorkerConfig);
  const sender = Child.start<SenderReport, SenderCommand>("sender", {
    url,
    count: 1_000_000,
    intervalMs: SEND_INTERVAL_MS,
    tolerateFailures: true,
  } satisfies SenderConfig);
  try {
    await Promise.all([worker.next("ready", 30_000), sender.next("ready", 30_000)]);
    worker.send({ type: "go" });
    await worker.next("started", 30_000);
    sender.send({ type: "go" });
    const arrivals = async () => {
      receiver.send({ type: "stats" });
      return new Map((await receiver.next("stats", 10_000)).arrivals);
    };
    while ((await arrivals()).size < queued * 0.3) await new Promise((resolve) => setTimeout(resolve, 50));
    let from = Date.now();
    if (failover) {
      const old = await cluster.primary();
      await cluster.stopPrimary();
      from = (await cluster.waitForWritablePrimary(60_000, old)).writableAt;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, from + AFTER_MS - Date.now())));
    sender.send({ type: "stop" });
    const { commits, failures = {} } = await sender.next("sent", 60_000);
    const deadline = Date.now() + 120_000;
    let arrived = await arrivals();
    while (commits.some(([id]) => !arrived.has(id)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      arrived = await arrivals();
    }
    const times = [...arrived.values()];
    const next = Math.min(...times.filter((at) => at >= from));
    const latencies = commits.flatMap(([id, committed]) => {
      const at = arrived.get(id);
      return committed >= from && at !== undefined ? [at - committed] : [];
    });
    const failedSends = Object.values(failures).reduce((sum, n) => sum + n, 0);
    const result = { silentMs: next - from, latencies, failedSends };
    log(
      `  ${failover ? "failover" : "no failover"}: next request ${result.silentMs.toFixed(0)} ms after ` +
        `${failover ? "the new primary took writes" : "the mark"}; after it commit → request p50 ` +
        `${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms ` +
        `(${latencies.length} messages); ${failedSends} sends failed ${JSON.stringify(failures)}`,
    );
    return result;
  } finally {
    await sender.kill();
    await worker.kill();
  }
}

/** A clean stop of the primary mid-drain, beside the same run without it. */
export const failover: Scenario = {
  name: "failover",
  storage: "postgres",
  description:
    "a pg_auto_failover pair's primary stopped at 30% of a drain: ms without a request after the new primary takes writes (≤ 2,000), commit → request after it, beside the same run without a failover",
  async run(context) {
    const { scale, log } = context;
    const queued = scale.quick ? 2_000 : 5_000;
    log("  starting a pg_auto_failover monitor, primary and synchronous standby on 127.0.0.1…");
    const cluster = await startFailoverCluster({ database: "postel" });
    const admin = postgres(cluster.url("primary"), { max: 2, onnotice: () => {} });
    const { receiver, base } = await startReceiver(true);
    try {
      await migrate(admin);
      const runs: { failover: RunResult[]; reference: RunResult[] } = { failover: [], reference: [] };
      for (let run = 1; run <= scale.runs; run++) {
        log(`  run ${run}/${scale.runs}`);
        runs.reference.push(await runOnce(context, cluster, admin, receiver, base, queued, false));
        runs.failover.push(await runOnce(context, cluster, admin, receiver, base, queued, true));
      }
      const metric = (
        name: string,
        unit: string,
        pick: (r: RunResult) => number,
        target?: number,
      ): Metric => {
        const postelRuns = runs.failover.map(pick);
        const naiveRuns = runs.reference.map(pick);
        return {
          scenario: "failover",
          name,
          unit,
          postel: median(postelRuns),
          postelRuns,
          naive: median(naiveRuns),
          naiveRuns,
          ...(target === undefined ? {} : { target: { op: "<=", value: target } }),
        };
      };
      return [
        {
          ...metric("no request after the new primary takes writes", "ms", (r) => r.silentMs, 2_000),
          note: "the baseline column is the same run without a failover (ms from a mark at 30% to the next request)",
        },
        metric("commit → request p50 after it", "ms", (r) => percentile(r.latencies, 50)),
        metric("commit → request p99 after it", "ms", (r) => percentile(r.latencies, 99)),
        metric("send() failures", "sends", (r) => r.failedSends),
      ];
    } finally {
      await receiver.kill();
      await admin.end({ timeout: 1 });
      await cluster.close();
    }
  },
};
