import { Child } from "../children.js";
import { createBenchDatabase, seedMessages } from "../database.js";
import { createEndpointsAt, startEndpoints } from "../drain-run.js";
import {
  type EndpointStats,
  type PostelWorkerConfig,
  preciseNow,
  type SenderCommand,
  type SenderConfig,
  type SenderReport,
  type WorkerCommand,
  type WorkerReport,
} from "../protocol.js";
import type { Scenario, ScenarioContext } from "../scenario.js";
import { type Metric, median, percentile } from "../stats.js";

/** The quiet endpoint's messages: one every 25 ms, at least 100 and at most 200 per run. */
const SENDS = { intervalMs: 25, minCount: 100, count: 200 };

/** What one run measured. */
interface QuietRun {
  /** Per quiet message: first request at the quiet endpoint − `send()` returned, in ms. */
  latencies: number[];
  /** Quiet messages sent before the busy endpoint had its whole backlog. */
  sentDuringBacklog: number;
  /** The busy endpoint's deliveries per second from `postel.start()` to its last new message. */
  busyPerSecond: number;
}

/**
 * One run: endpoint A (`bulk.*`) with `backlog` messages pre-enqueued, endpoint B (`quiet.*`) with
 * none; one Postel worker process (default settings) and a sender process committing `quiet.*`
 * messages one at a time until A has everything (at least 100, at most 200). Latency is measured as in
 * wake-latency: both processes stamp with `preciseNow()`, comparable across processes.
 */
async function runOnce({ log }: ScenarioContext, backlog: number, label: string): Promise<QuietRun> {
  const { receiver, urls } = await startEndpoints([
    { respond: { kind: "ok" }, record: "ids" },
    { respond: { kind: "ok" }, record: "log" },
  ]);
  const database = await createBenchDatabase();
  const children: { kill(): Promise<void> }[] = [];
  try {
    await createEndpointsAt(database, [
      { url: urls[0]!, types: ["bulk.*"] },
      { url: urls[1]!, types: ["quiet.*"] },
    ]);
    if (backlog > 0) await seedMessages(database.sql, backlog, "msg_bulk", ["bulk.created"]);
    const senderConfig: SenderConfig = { url: database.url, ...SENDS, type: "quiet.ping" };
    const sender = Child.start<SenderReport, SenderCommand>("sender", senderConfig);
    children.push(sender);
    const workerConfig: PostelWorkerConfig = { url: database.url, target: 0 };
    const worker = Child.start<WorkerReport, WorkerCommand>("postel-worker", workerConfig);
    children.push(worker);
    await sender.next("ready", 30_000);
    await worker.next("ready", 30_000);
    worker.send({ type: "go" });
    const { at: start } = await worker.next("started", 30_000);
    sender.send({ type: "go" });

    const stats = async (): Promise<EndpointStats[]> => {
      receiver.send({ type: "stats" });
      return (await receiver.next("stats", 10_000)).endpoints;
    };
    const deadline = start + 5 * 60_000;
    let busy = (await stats())[0]!;
    while (busy.distinct < backlog && preciseNow() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      busy = (await stats())[0]!;
    }
    sender.offer({ type: "stop" });
    const { commits } = await sender.next("sent", 60_000);

    const arrivalDeadline = preciseNow() + 30_000;
    while ((await stats())[1]!.distinct < commits.length && preciseNow() < arrivalDeadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    receiver.send({ type: "log" });
    const { endpoints: logs } = await receiver.next("log", 30_000);
    const firstArrival = new Map<string, number>();
    for (const [id, at] of logs[1] ?? []) if (!firstArrival.has(id)) firstArrival.set(id, at);
    const latencies = commits.flatMap(([id, committed]) => {
      const at = firstArrival.get(id);
      return at === undefined ? [] : [at - committed];
    });
    const run: QuietRun = {
      latencies,
      sentDuringBacklog: backlog === 0 ? 0 : commits.filter(([, at]) => at < busy.lastNewAt).length,
      busyPerSecond: backlog === 0 ? 0 : busy.distinct / ((busy.lastNewAt - start) / 1000),
    };
    log(
      `  ${label}: ${latencies.length}/${commits.length} arrived` +
        (backlog === 0
          ? ""
          : ` (${run.sentDuringBacklog} sent while the busy endpoint had its backlog, which drained at ` +
            `${Math.round(run.busyPerSecond).toLocaleString("en-US")}/s)`) +
        `, p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, ` +
        `max ${Math.max(...latencies).toFixed(1)} ms`,
    );
    return run;
  } finally {
    for (const child of children) await child.kill();
    await receiver.kill();
    await database.drop();
  }
}

/**
 * Endpoint isolation (issue 13): how long a message to a quiet endpoint waits while another endpoint
 * drains a large backlog, beside the same with no backlog (the idle wake-up latency).
 */
export const quietEndpoint: Scenario = {
  name: "quiet-endpoint",
  storage: "postgres",
  description: "commit → request at an endpoint with no backlog while another drains 50,000 (p99 ≤ 50 ms)",
  async run(context) {
    const { scale } = context;
    const idle: QuietRun[] = [];
    const busy: QuietRun[] = [];
    for (let run = 1; run <= scale.runs; run++) {
      idle.push(await runOnce(context, 0, `idle run ${run}/${scale.runs}`));
      busy.push(await runOnce(context, scale.quietBacklog, `backlog run ${run}/${scale.runs}`));
    }
    const backlog = scale.quietBacklog.toLocaleString("en-US");
    const latency = (p: number, runs: QuietRun[]) => runs.map((r) => percentile(r.latencies, p));
    const row = (p: number): Metric => {
      const baseline = latency(p, idle);
      const runs = latency(p, busy);
      return {
        scenario: "quiet-endpoint",
        name: `commit → request p${p}, another endpoint draining ${backlog}`,
        unit: "ms",
        postel: median(runs),
        postelRuns: runs,
        naive: median(baseline),
        naiveRuns: baseline,
        ...(p === 99 ? { target: { op: "<=", value: 50 } as const } : {}),
      };
    };
    const rates = busy.map((r) => r.busyPerSecond);
    return [
      row(50),
      row(99),
      {
        scenario: "quiet-endpoint",
        name: `the busy endpoint's drain of ${backlog} meanwhile`,
        unit: "deliveries/s",
        postel: median(rates),
        postelRuns: rates,
        note:
          `baseline = the same setup with no backlog (idle wake-up); a sender process commits a quiet.* message ` +
          `every ${SENDS.intervalMs} ms (a pause after each send() returns) until the busy endpoint has ` +
          `everything, at least ${SENDS.minCount}, at most ${SENDS.count}; Postel's default settings`,
      },
    ];
  },
};
