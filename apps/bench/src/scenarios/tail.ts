import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { createBenchDatabase, seedMessages } from "../database.js";
import { createEndpoints, postgresMeter, startReceiver, timeWorker } from "../drain-run.js";
import type { Scenario } from "../scenario.js";
import { formatNumber, type Metric, median, percentile } from "../stats.js";

// The CLI as users run it (built by `pnpm bench` before it starts, like the packages the bench loads).
const CLI = fileURLToPath(new URL("../../../../packages/cli/dist/bin.js", import.meta.url));
/** How long `tail` may take after the drain's end to print the last attempts. */
const CATCH_UP_MS = 30_000;

/** What one run saw: every attempt `tail` printed, with when it was printed. */
interface TailRun {
  made: number;
  perSecond: number;
  /** Distinct attempts printed. */
  printed: number;
  /** Lines that printed an attempt already printed. */
  repeated: number;
  /** Printed after an attempt with a higher id (tail re-reads behind its newest id). */
  outOfOrder: number;
  /** Milliseconds from an attempt's id (made when its response arrived) to its line on stdout. */
  lags: number[];
}

/**
 * One run: `messages` pre-enqueued for one endpoint, `postel tail --since 0s --json` started on the
 * database, then one Postel worker process drains them as fast as it can while the tail's lines are
 * read and timed as they come.
 */
async function runOnce(messages: number, log: (line: string) => void, label: string): Promise<TailRun> {
  // Loaded when the scenario runs: under --baseline an older core, which may lack idTime, is loaded
  // by every scenario module that main.ts imports.
  const { idTime } = await import("@postel/core");
  const { receiver, base } = await startReceiver();
  const database = await createBenchDatabase();
  const tail = spawn(process.execPath, [CLI, "tail", "--since", "0s", "--json"], {
    env: { ...process.env, POSTEL_DATABASE_URL: database.url, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const seen = new Map<string, number>();
  const run: Omit<TailRun, "made" | "perSecond"> = { printed: 0, repeated: 0, outOfOrder: 0, lags: [] };
  let highest = "";
  createInterface({ input: tail.stdout }).on("line", (line) => {
    const printedAt = Date.now();
    const { id } = JSON.parse(line) as { id: string };
    run.printed += 1;
    if (seen.has(id)) run.repeated += 1;
    seen.set(id, printedAt);
    if (id < highest) run.outOfOrder += 1;
    else highest = id;
    run.lags.push(printedAt - (idTime(id) ?? printedAt));
  });
  let errors = "";
  tail.stderr.on("data", (chunk: Buffer) => {
    errors += chunk.toString();
  });
  try {
    await createEndpoints(database, base, 1);
    await seedMessages(database.sql, messages, "msg_tail");
    const started = Date.now();
    while (!errors.includes("Tailing attempts since")) {
      if (tail.exitCode !== null || Date.now() - started > 30_000)
        throw new Error(`tail did not start: ${errors}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const drained = await timeWorker(
      "postel-worker",
      { url: database.url, target: messages },
      { label, log, receiver },
      postgresMeter(database),
    );
    const deadline = Date.now() + CATCH_UP_MS;
    while (seen.size < drained.deliveries && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // A poll more: anything printed twice shows now.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const result = { ...run, printed: seen.size, made: drained.deliveries, perSecond: drained.perSecond };
    log(
      `  ${label}: ${formatNumber(result.perSecond)} attempts/s made, ${result.printed.toLocaleString("en-US")} ` +
        `of ${result.made.toLocaleString("en-US")} printed (${result.repeated} twice, ${result.outOfOrder} out of order), ` +
        `lag p50 ${percentile(result.lags, 50)} ms, p99 ${percentile(result.lags, 99)} ms, max ${Math.max(...result.lags)} ms`,
    );
    return result;
  } finally {
    tail.kill("SIGINT");
    await receiver.kill();
    await database.drop();
  }
}

/**
 * Issue 28: `postel tail` beside a drain as fast as this machine makes attempts on PostgreSQL: every
 * attempt printed once, in order, and how long after its response arrived.
 */
export const tail: Scenario = {
  name: "tail",
  storage: "postgres",
  description: "postel tail beside a full-speed drain: every attempt printed once, lag ≤ 1 s",
  async run({ scale, log }) {
    const runs: TailRun[] = [];
    for (let n = 1; n <= scale.runs; n++)
      runs.push(await runOnce(scale.drainMessages, log, `run ${n}/${scale.runs}`));
    const lag = (p: number) => runs.map((r) => percentile(r.lags, p));
    const metric = (name: string, unit: string, values: number[], target?: Metric["target"]): Metric => ({
      scenario: "tail",
      name,
      unit,
      postel: median(values),
      postelRuns: values,
      ...(target ? { target } : {}),
    });
    const messages = scale.drainMessages.toLocaleString("en-US");
    return [
      metric(
        `attempts made per second, ${messages} deliveries`,
        "attempts/s",
        runs.map((r) => r.perSecond),
      ),
      metric(
        "attempts printed ÷ made",
        "ratio",
        runs.map((r) => r.printed / r.made),
        { op: ">=", value: 1 },
      ),
      metric(
        "attempts printed twice or out of order",
        "attempts",
        runs.map((r) => r.repeated + r.outOfOrder),
        {
          op: "<=",
          value: 0,
        },
      ),
      metric("lag from response to printed line, p50", "ms", lag(50), { op: "<=", value: 1_000 }),
      metric("lag from response to printed line, p99", "ms", lag(99), { op: "<=", value: 1_000 }),
    ];
  },
};
