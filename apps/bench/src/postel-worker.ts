import { Postel } from "@postel/core";
import { PostgresStorage } from "@postel/storage-postgres";
import { SqliteStorage } from "@postel/storage-sqlite";
import {
  childConfig,
  cpuMs,
  peakRss,
  preciseNow,
  report,
  type WorkerCommand,
  type WorkerConfig,
  type WorkerReport,
} from "./protocol.js";
import { traceStorage } from "./trace-storage.js";

// One Postel worker process, configured as an application would: its own pool from a URL, the
// default worker settings unless the scenario overrides them. Counts `delivered` events (emitted only
// after the outcome is recorded) and reports when the target is reached.
const config = childConfig<WorkerConfig>();
const storage =
  config.storage === "sqlite"
    ? SqliteStorage({ url: config.url }, { migrate: false, synchronous: config.synchronous ?? "full" })
    : PostgresStorage({ url: config.url }, { migrate: false });
// BENCH_TRACE=1 prints, on exit, how often each storage call ran and how long it took on average.
if (process.env["BENCH_TRACE"]) traceStorage(storage);
const postel = Postel({
  outbound: {
    storage,
    workers: {
      concurrency: config.concurrency,
      ...(config.batchSize === undefined ? {} : { batchSize: config.batchSize }),
    },
    http: { allowPrivateNetworks: true },
  },
});

let delivered = 0;
let startedAt = 0;
let cpuAtStart = 0;
let finished = false;
postel.on("delivered", () => {
  delivered += 1;
  if (!finished && config.target > 0 && delivered >= config.target) {
    finished = true;
    const elapsedMs = preciseNow() - startedAt;
    const cpu = cpuMs() - cpuAtStart;
    void peakRss().then((peakRssBytes) =>
      report<WorkerReport>({ type: "done", delivered, elapsedMs, peakRssBytes, cpuMs: cpu }),
    );
  }
});
postel.on("error", ({ error, context }) => console.error(`[postel-worker] ${context}:`, error));

const progress = setInterval(() => report<WorkerReport>({ type: "progress", delivered }), 1_000);
progress.unref();

process.on("message", async (command: WorkerCommand) => {
  if (command.type === "go") {
    startedAt = preciseNow();
    cpuAtStart = cpuMs();
    await postel.start();
    report<WorkerReport>({ type: "started" });
  } else {
    await postel.close();
    report<WorkerReport>({ type: "stopped", delivered, peakRssBytes: await peakRss() });
    process.disconnect();
  }
});

// Warm the pool (SQLite: open the file and the writer) and check the schema before the clock starts.
await postel.outbound.endpoints.list();
report<WorkerReport>({ type: "ready" });
