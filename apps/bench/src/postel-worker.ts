import { Postel } from "@postel/core";
import { PostgresStorage } from "@postel/storage-postgres";
import { SqliteStorage } from "@postel/storage-sqlite";
import { explainingPool } from "./explain-capture.js";
import {
  childConfig,
  credentialsOption,
  type PostelWorkerConfig,
  report,
  type WorkerReport,
} from "./protocol.js";
import { telemetryFor } from "./telemetry-sdk.js";
import { traceStorage } from "./trace-storage.js";
import { serveWorker } from "./worker-process.js";

// One Postel worker process, configured as an application would: its own pool from a URL, the
// default worker settings unless the scenario overrides them. Counts `delivered` events (emitted only
// after the outcome is recorded) and reports when the target is reached.
const config = childConfig<PostelWorkerConfig>();
// BENCH_EXPLAIN=<dir>: every plan the worker runs is captured (explain-capture.ts).
const explainDir = process.env["BENCH_EXPLAIN"];
const explaining =
  explainDir && config.storage !== "sqlite"
    ? explainingPool(config.url, explainDir, config.explainLabel ?? "worker")
    : undefined;
const storage =
  config.storage === "sqlite"
    ? SqliteStorage({ url: config.url }, { migrate: false, synchronous: config.synchronous ?? "full" })
    : explaining
      ? PostgresStorage({ sql: explaining.sql }, { migrate: false })
      : PostgresStorage({ url: config.url }, { migrate: false });
// BENCH_TRACE=1 prints, on exit, how often each storage call ran and how long it took on average.
if (process.env["BENCH_TRACE"]) traceStorage(storage);
// Only when on: the option is left out otherwise, so a library from before it (--baseline) runs too.
const telemetry = telemetryFor(config.telemetry ?? "off");
const postel = Postel({
  ...(telemetry === false ? {} : { telemetry }),
  outbound: {
    storage,
    workers: {
      ...(config.concurrency === undefined ? {} : { concurrency: config.concurrency }),
      ...(config.batchSize === undefined ? {} : { batchSize: config.batchSize }),
    },
    ...(config.retention === undefined ? {} : { retention: config.retention }),
    ...(config.credentials === undefined ? {} : { credentials: credentialsOption(config.credentials) }),
    http: { allowPrivateNetworks: true },
  },
});

const counted = serveWorker({
  target: config.target,
  start: () => postel.start(),
  stop: async () => {
    await postel.close();
    explaining?.write();
  },
});
postel.on("delivered", () => counted(1));
postel.on("error", ({ error, context }) => console.error(`[postel-worker] ${context}:`, error));

// Warm the pool (SQLite: open the file and the writer) and check the schema before the clock starts.
await postel.outbound.endpoints.list();
report<WorkerReport>({ type: "ready" });
