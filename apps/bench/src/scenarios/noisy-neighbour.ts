import { Child } from "../children.js";
import { createBenchDatabase, seedMessages } from "../database.js";
import { createEndpointsAt, startEndpoints } from "../drain-run.js";
import {
  type Behaviour,
  type PostelWorkerConfig,
  preciseNow,
  type ReceiverEndpoint,
  type WorkerCommand,
  type WorkerReport,
} from "../protocol.js";
import type { Scenario, ScenarioContext } from "../scenario.js";
import { type Metric, median } from "../stats.js";

const ENDPOINTS = 10;
const HEALTHY = ENDPOINTS - 1;

/** How endpoint 0 answers in each variant; the other nine always answer 200 at once. */
const VARIANTS = {
  none: { kind: "ok" },
  hung: { kind: "hang" },
  trickle: { kind: "trickle", intervalMs: 1_000 },
  "slow-200": { kind: "delay", ms: 10_000 },
} as const satisfies Record<string, Behaviour>;
type Variant = keyof typeof VARIANTS;

const WHAT: Record<Variant, string> = {
  none: "10 healthy endpoints",
  hung: "one accepts the connection and never answers",
  trickle: "one sends headers, then 1 byte per second",
  "slow-200": "one answers 200 after 10 s",
};

/** What one run measured at the nine healthy endpoints. */
interface Isolation {
  /** From `postel.start()` until all nine had every message; infinite when the cap came first. */
  doneMs: number;
  /** Distinct messages the nine had received by then (or by the cap). */
  received: number;
  /** The longest gap between consecutive requests at any one of them (the first from the start). */
  stallMs: number;
}

/**
 * Reads the nine healthy endpoints' request logs (`[webhook-id, arrival]`, in arrival order): each
 * endpoint is done when its `expected`-th distinct webhook-id arrives (retries do not count twice);
 * its stalls are the gaps between `start`, each request and that moment (or `end`, the cap, if it
 * never gets there).
 */
function measureIsolation(
  logs: [string, number][][],
  start: number,
  expected: number,
  end: number,
): Isolation {
  let doneAt = start;
  let complete = true;
  let received = 0;
  let stallMs = 0;
  for (const log of logs) {
    const seen = new Set<string>();
    let previous = start;
    for (const [id, at] of log) {
      if (at > end || seen.size === expected) break;
      stallMs = Math.max(stallMs, at - previous);
      previous = at;
      seen.add(id);
    }
    received += seen.size;
    if (seen.size === expected) {
      doneAt = Math.max(doneAt, previous);
    } else {
      complete = false;
      stallMs = Math.max(stallMs, end - previous);
    }
  }
  return { doneMs: complete ? doneAt - start : Number.POSITIVE_INFINITY, received, stallMs };
}

/**
 * One run: the receiver process (endpoint 0 answering as `variant` says, the nine others at once), a
 * fresh database with the messages pre-enqueued, one Postel worker process with default settings.
 */
async function runOnce({ scale, log }: ScenarioContext, variant: Variant, label: string): Promise<Isolation> {
  const endpoints: ReceiverEndpoint[] = Array.from({ length: ENDPOINTS }, (_, i) => ({
    respond: i === 0 ? VARIANTS[variant] : { kind: "ok" },
    record: "log",
  }));
  const { receiver, urls } = await startEndpoints(endpoints);
  const database = await createBenchDatabase();
  let worker: Child<WorkerReport, WorkerCommand> | undefined;
  try {
    await createEndpointsAt(
      database,
      urls.map((url) => ({ url, types: ["*"] })),
    );
    const expected = scale.noisyMessages;
    await seedMessages(database.sql, expected);
    const config: PostelWorkerConfig = { url: database.url, target: 0 };
    worker = Child.start<WorkerReport, WorkerCommand>("postel-worker", config);
    await worker.next("ready", 30_000);
    worker.send({ type: "go" });
    const { at: start } = await worker.next("started", 30_000);
    const end = start + scale.noisyCapMs;
    const total = (HEALTHY * expected).toLocaleString("en-US");
    let logged = start;
    for (;;) {
      receiver.send({ type: "stats" });
      const { endpoints: stats } = await receiver.next("stats", 10_000);
      const healthy = stats.slice(1).reduce((sum, s) => sum + Math.min(s.distinct, expected), 0);
      const now = preciseNow();
      if (healthy === HEALTHY * expected || now >= end) break;
      if (now - logged >= 5_000) {
        logged = now;
        log(`  ${label}: ${healthy.toLocaleString("en-US")}/${total} at the healthy endpoints`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    receiver.send({ type: "log" });
    const { endpoints: logs } = await receiver.next("log", 30_000);
    const measured = measureIsolation(logs.slice(1), start, expected, end);
    const done = Number.isFinite(measured.doneMs)
      ? `all ${total} in ${(measured.doneMs / 1000).toFixed(2)} s`
      : `${measured.received.toLocaleString("en-US")} of ${total} after ${scale.noisyCapMs / 1000} s`;
    log(`  ${label}: ${done}, longest stall of a healthy endpoint ${(measured.stallMs / 1000).toFixed(2)} s`);
    return measured;
  } finally {
    // Killed, not stopped: a graceful close would wait for the requests the bad endpoint holds.
    await worker?.kill();
    await receiver.kill();
    await database.drop();
  }
}

/**
 * Endpoint isolation (issue 13): messages fanned out to 10 endpoints, one of which is healthy, hung,
 * trickling or slow; how long the nine healthy ones take to get everything, and their longest stall.
 */
export const noisyNeighbour: Scenario = {
  name: "noisy-neighbour",
  storage: "postgres",
  description:
    "fan-out to 10 endpoints, one hung, trickling or slow: the 9 healthy ones within 1.25× of all-healthy, no stall > 1 s",
  async run(context) {
    const { scale } = context;
    const variants = Object.keys(VARIANTS) as Variant[];
    const runs = new Map<Variant, Isolation[]>(variants.map((v) => [v, []]));
    for (let run = 1; run <= scale.runs; run++) {
      for (const variant of variants) {
        runs.get(variant)?.push(await runOnce(context, variant, `${variant} run ${run}/${scale.runs}`));
      }
    }
    const total = (HEALTHY * scale.noisyMessages).toLocaleString("en-US");
    const seconds = (ms: number) => ms / 1000;
    const baseline = runs.get("none")?.map((r) => seconds(r.doneMs)) ?? [];
    return variants.flatMap((variant): Metric[] => {
      const measured = runs.get(variant) ?? [];
      const doneRuns = measured.map((r) => seconds(r.doneMs));
      const stallRuns = measured.map((r) => seconds(r.stallMs));
      const done = median(doneRuns);
      const isBaseline = variant === "none";
      return [
        {
          scenario: "noisy-neighbour",
          name: `${variant} (${WHAT[variant]}): 9 healthy endpoints have all ${total}`,
          unit: "s",
          postel: done,
          postelRuns: doneRuns,
          ...(Number.isFinite(done)
            ? {}
            : {
                display: `${median(measured.map((r) => r.received)).toLocaleString("en-US")} of ${total} after ${seconds(scale.noisyCapMs)} s`,
              }),
          ...(isBaseline
            ? {}
            : { naive: median(baseline), naiveRuns: baseline, ratioTarget: { op: "<=", value: 1.25 } }),
        },
        {
          scenario: "noisy-neighbour",
          name: `${variant}: longest stall of a healthy endpoint`,
          unit: "s",
          postel: median(stallRuns),
          postelRuns: stallRuns,
          target: { op: "<=", value: 1 },
          ...(isBaseline
            ? {
                note:
                  `${scale.noisyMessages.toLocaleString("en-US")} messages pre-enqueued, each to 10 endpoints; Postel's ` +
                  "default settings; baseline = the `none` row (10 healthy endpoints); each endpoint its own " +
                  `port; a run is cut off ${seconds(scale.noisyCapMs)} s after postel.start()`,
              }
            : {}),
        },
      ];
    });
  },
};
