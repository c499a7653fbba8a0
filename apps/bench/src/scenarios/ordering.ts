import { Child } from "../children.js";
import { createBenchDatabase, seedMessages } from "../database.js";
import {
  createEndpointsAt,
  type DrainMeasurement,
  postgresMeter,
  startEndpoints,
  timeWorker,
} from "../drain-run.js";
import {
  type PostelWorkerConfig,
  preciseNow,
  type ReceiverEndpoint,
  type SenderCommand,
  type SenderConfig,
  type SenderReport,
  type WorkerCommand,
  type WorkerReport,
} from "../protocol.js";
import type { Scenario, ScenarioContext } from "../scenario.js";
import { type Metric, median, percentile } from "../stats.js";

/** Issue 30's figures: keyed drain ≥ 0.8× unordered; quiet keys' p99 ≤ 2× idle; healthy endpoints ≤ 1.25×. */
const TARGETS = { drain: 0.8, quietP99: 2, failing: 1.25 } as const;

const OK: ReceiverEndpoint = { respond: { kind: "ok" }, record: "count" };
const DOWN: ReceiverEndpoint = { respond: { kind: "fail", status: 500 }, record: "count" };

/**
 * One drain of `keys × perKey` pre-enqueued messages (message i has key `key_<i % keys>` when `keyed`)
 * to every endpoint of `endpoints`, timed until `healthy` endpoints' deliveries are all recorded.
 */
async function drainOnce(
  context: ScenarioContext,
  options: {
    keys: number;
    perKey: number;
    keyed: boolean;
    endpoints: ReceiverEndpoint[];
    healthy: number;
    label: string;
  },
): Promise<DrainMeasurement> {
  const { receiver, urls } = await startEndpoints(options.endpoints);
  const database = await createBenchDatabase();
  try {
    // The failing endpoint, when there is one, is the last: created last, fanned out to last.
    await createEndpointsAt(
      database,
      urls.map((url) => ({ url, types: ["*"] })),
    );
    const messages = options.keys * options.perKey;
    await seedMessages(
      database.sql,
      messages,
      "msg_bench",
      undefined,
      null,
      options.keyed ? options.keys : 0,
    );
    const config: PostelWorkerConfig = { url: database.url, target: messages * options.healthy };
    return await timeWorker(
      "postel-worker",
      config,
      { label: options.label, log: context.log, receiver },
      postgresMeter(database),
    );
  } finally {
    await receiver.kill();
    await database.drop();
  }
}

/** How long the worker runs before the quiet keys' sender starts, in both the idle and the hot run. */
const SETTLE_MS = 1_000;

/** Per message of the quiet keys: its first request − `send()` returned, in ms. */
async function quietLatencies(context: ScenarioContext, hot: number, label: string): Promise<number[]> {
  const { receiver, urls } = await startEndpoints([{ respond: { kind: "ok" }, record: "log" }]);
  const database = await createBenchDatabase();
  const children: { kill(): Promise<void> }[] = [];
  try {
    await createEndpointsAt(database, [{ url: urls[0]!, types: ["*"] }]);
    // The hot key: every message of the backlog shares one key, so it is delivered one at a time.
    if (hot > 0) await seedMessages(database.sql, hot, "msg_hot", undefined, null, 1);
    const senderConfig: SenderConfig = { url: database.url, intervalMs: 25, count: 200, orderingKeys: 999 };
    const sender = Child.start<SenderReport, SenderCommand>("sender", senderConfig);
    children.push(sender);
    const worker = Child.start<WorkerReport, WorkerCommand>("postel-worker", {
      url: database.url,
      target: 0,
    });
    children.push(worker);
    await sender.next("ready", 30_000);
    await worker.next("ready", 30_000);
    worker.send({ type: "go" });
    await worker.next("started", 30_000);
    // The figure is of a worker at work beside the hot key, not of its first moments (a new process's
    // first queries, on fresh database connections, are slow in both runs): the sender starts later.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    sender.send({ type: "go" });
    const { commits } = await sender.next("sent", 120_000);
    const deadline = preciseNow() + 30_000;
    const arrived = async () => {
      receiver.send({ type: "log" });
      return (await receiver.next("log", 30_000)).endpoints[0] ?? [];
    };
    let log = await arrived();
    const quiet = new Set(commits.map(([id]) => id));
    const seen = () => new Set(log.filter(([id]) => quiet.has(id)).map(([id]) => id)).size;
    while (seen() < commits.length && preciseNow() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      log = await arrived();
    }
    const first = new Map<string, number>();
    for (const [id, at] of log) if (!first.has(id)) first.set(id, at);
    const hotDone = log.filter(([id]) => !quiet.has(id)).length;
    const latencies = commits.flatMap(([id, at]) => (first.has(id) ? [first.get(id)! - at] : []));
    context.log(
      `  ${label}: ${latencies.length}/${commits.length} quiet messages arrived` +
        (hot > 0
          ? ` while the hot key had ${hotDone.toLocaleString("en-US")} of ${hot.toLocaleString("en-US")} through`
          : "") +
        `, p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms`,
    );
    return latencies;
  } finally {
    for (const child of children) await child.kill();
    await receiver.kill();
    await database.drop();
  }
}

/**
 * Issue 30: ordered delivery per key. (1) 1,000 keys × 20 messages to one endpoint beside the same
 * messages without keys; (2) one hot key with 10,000 messages beside 999 quiet keys: the quiet keys'
 * commit → first request, beside the same with no hot key; (3) 10 endpoints, one answering 500: how
 * long the 9 healthy ones take beside the same 9 alone. Runs alternate, the baseline first.
 */
export const ordering: Scenario = {
  name: "ordering",
  storage: "postgres",
  description:
    "ordered delivery per key: keyed drain ≥ 0.8× unordered, hot key p99 ≤ 2× idle, one failing of 10 ≤ 1.25×",
  async run(context) {
    const { scale, log } = context;
    const quick = scale.runs === 1 && scale.quietBacklog < 50_000;
    const keys = quick ? 200 : 1_000;
    const perKey = 20;
    const hot = quick ? 2_000 : 10_000;
    const fanKeys = quick ? 50 : 200;
    const unordered: DrainMeasurement[] = [];
    const ordered: DrainMeasurement[] = [];
    const idle: number[][] = [];
    const busy: number[][] = [];
    const alone: DrainMeasurement[] = [];
    const beside: DrainMeasurement[] = [];
    const parts = selectedParts();
    for (let run = 1; run <= scale.runs; run++) {
      const of = `${run}/${scale.runs}`;
      if (parts.has("drain")) {
        const single = { keys, perKey, endpoints: [OK], healthy: 1 };
        unordered.push(await drainOnce(context, { ...single, keyed: false, label: `unordered run ${of}` }));
        ordered.push(await drainOnce(context, { ...single, keyed: true, label: `${keys} keys run ${of}` }));
      }
      if (parts.has("hot")) {
        idle.push(await quietLatencies(context, 0, `idle run ${of}`));
        busy.push(await quietLatencies(context, hot, `hot key run ${of}`));
      }
      if (parts.has("failing")) {
        const nine = Array.from({ length: 9 }, () => OK);
        const fan = { keys: fanKeys, perKey: 10, keyed: true, healthy: 9 };
        alone.push(
          await drainOnce(context, { ...fan, endpoints: nine, label: `9 healthy endpoints run ${of}` }),
        );
        beside.push(
          await drainOnce(context, {
            ...fan,
            endpoints: [...nine, DOWN],
            label: `9 healthy + 1 failing run ${of}`,
          }),
        );
      }
    }
    log(
      `  ordering: ${keys} keys × ${perKey}, hot key ${hot}, 10 endpoints × ${fanKeys * 10} keyed messages`,
    );
    const rate = (runs: DrainMeasurement[]) => runs.map((m) => m.perSecond);
    const p99 = (runs: number[][]) => runs.map((l) => percentile(l, 99));
    const seconds = (runs: DrainMeasurement[]) => runs.map((m) => m.elapsedMs / 1000);
    const cpu = (runs: DrainMeasurement[]) => Math.round(median(runs.map((m) => m.cpuPer1k.database)));
    const all: Metric[] = [
      {
        scenario: "ordering",
        name: `${(keys * perKey).toLocaleString("en-US")} deliveries, ${keys.toLocaleString("en-US")} keys × ${perKey}, one endpoint`,
        unit: "deliveries/s",
        postel: median(rate(ordered)),
        postelRuns: rate(ordered),
        naive: median(rate(unordered)),
        naiveRuns: rate(unordered),
        ratioTarget: { op: ">=", value: TARGETS.drain },
        note: `baseline = the same messages without keys (target ${TARGETS.drain}× of it); PostgreSQL CPU ms per 1,000 deliveries: keyed ${cpu(ordered)}, unordered ${cpu(unordered)}`,
      },
      {
        scenario: "ordering",
        name: `quiet keys' commit → request p99, one key with ${hot.toLocaleString("en-US")} queued`,
        unit: "ms",
        postel: median(p99(busy)),
        postelRuns: p99(busy),
        naive: median(p99(idle)),
        naiveRuns: p99(idle),
        ratioTarget: { op: "<=", value: TARGETS.quietP99 },
        note: `baseline = the same sends with no hot key (target ${TARGETS.quietP99}× of it); a sender commits one message every 25 ms over 999 keys, 200 in all, from ${SETTLE_MS / 1000} s after the worker started`,
      },
      {
        scenario: "ordering",
        name: `9 healthy endpoints' ${(fanKeys * 10 * 9).toLocaleString("en-US")} keyed deliveries beside one answering 500`,
        unit: "s",
        postel: median(seconds(beside)),
        postelRuns: seconds(beside),
        naive: median(seconds(alone)),
        naiveRuns: seconds(alone),
        ratioTarget: { op: "<=", value: TARGETS.failing },
        note: `baseline = the 9 healthy endpoints alone (target ${TARGETS.failing}× of it); ${fanKeys} keys × 10 messages, every message to every endpoint; default breaker and retries`,
      },
    ];
    // Each row in the order of PARTS; a part not run leaves its row out.
    return all.filter((_, i) => parts.has(PARTS[i]!));
  },
};

/** The scenario's three measurements, in the order of its rows. */
const PARTS = ["drain", "hot", "failing"] as const;

/** The parts `BENCH_ORDERING` names (comma-separated, e.g. `drain,failing`); all three when unset. */
function selectedParts(): Set<string> {
  const given = process.env["BENCH_ORDERING"];
  if (given === undefined || given === "") return new Set(PARTS);
  const parts = new Set(given.split(",").map((part) => part.trim()));
  for (const part of parts) {
    if (!(PARTS as readonly string[]).includes(part)) {
      throw new Error(`BENCH_ORDERING: unknown part "${part}"; name some of ${PARTS.join(", ")}`);
    }
  }
  return parts;
}
