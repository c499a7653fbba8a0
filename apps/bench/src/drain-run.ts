import { Postel } from "@postel/core";
import { generateSecret } from "@postel/signing";
import { PostgresStorage } from "@postel/storage-postgres";
import { Child } from "./children.js";
import {
  type BenchDatabase,
  backendCpuMs,
  createBenchDatabase,
  PAYLOAD,
  seedMessages,
  seedNaive,
} from "./database.js";
import {
  type BenchCredentials,
  credentialsOption,
  type PeerWorkerConfig,
  type PostelWorkerConfig,
  type ReceiverCommand,
  type ReceiverConfig,
  type ReceiverEndpoint,
  type ReceiverReport,
  type WorkerCommand,
  type WorkerConfig,
  type WorkerReport,
} from "./protocol.js";
import { prepareTableState, type TableState, tenantOf } from "./table-state.js";
import {
  describeWal,
  describeWalBreakdown,
  endWal,
  inspectWal,
  startWal,
  type WalVolume,
} from "./wal-volume.js";

/** The receiver child, started once per scenario. */
export type Receiver = Child<ReceiverReport, ReceiverCommand>;

/** Starts the receiver process and returns it with its base URL. */
export async function startReceiver(recordArrivals = false): Promise<{ receiver: Receiver; base: string }> {
  const receiver = Child.start<ReceiverReport, ReceiverCommand>("receiver", { recordArrivals });
  const { port } = await receiver.next("ready", 10_000);
  return { receiver, base: `http://127.0.0.1:${port}` };
}

/**
 * Starts the receiver process with one server (one port, one origin) per endpoint and returns it with
 * each endpoint's webhook URL, in order.
 */
export async function startEndpoints(
  endpoints: ReceiverEndpoint[],
): Promise<{ receiver: Receiver; urls: string[] }> {
  const config: ReceiverConfig = { recordArrivals: false, endpoints };
  const receiver = Child.start<ReceiverReport, ReceiverCommand>("receiver", config);
  const { ports } = await receiver.next("ready", 10_000);
  return { receiver, urls: ports.map((port, i) => `http://127.0.0.1:${port}/hooks/${i}`) };
}

/**
 * What one drain measured. CPU figures are milliseconds of CPU per 1,000 deliveries; `database` is
 * the PostgreSQL backends' (SQLite runs inside the worker, so its time is in `worker` and this is 0).
 */
export interface DrainMeasurement {
  deliveries: number;
  elapsedMs: number;
  perSecond: number;
  peakRssBytes: number;
  cpuPer1k: { worker: number; database: number; receiver: number };
  /** The WAL the drain wrote (PostgreSQL only), from a CHECKPOINT at its start. */
  wal?: WalVolume;
}

/** Options of one drain. */
export interface DrainOptions {
  /** Messages pre-enqueued. */
  messages: number;
  /** Endpoints every message fans out to. */
  endpoints: number;
  log: (line: string) => void;
  label: string;
  receiver: Receiver;
  /** Overrides of the worker configuration (Postel: concurrency, batchSize, retention, telemetry). */
  worker?: Partial<PostelWorkerConfig>;
  /** Reuse this database (history scenario) instead of a fresh one. */
  database?: BenchDatabase;
  /** Message id prefix (unique per run when the database is reused). */
  prefix?: string;
  /** Stored with every seeded message, as `send()` does inside a span with telemetry on. */
  traceContext?: string;
}

/**
 * Creates `count` endpoints (all matching every type) on the receiver through Postel's API. With
 * `credentials` (the credentials scenarios), each also has an `Authorization` header, and its
 * credentials are stored as the worker will read them: encrypted with the key, or in plain text.
 */
export async function createEndpoints(
  database: BenchDatabase,
  base: string,
  count: number,
  credentials?: BenchCredentials,
): Promise<void> {
  const headers = credentials === undefined ? {} : { headers: { Authorization: BENCH_AUTHORIZATION } };
  const endpoints = Array.from({ length: count }, (_, i) => ({
    url: `${base}/hooks/${i}`,
    types: ["*"],
    ...headers,
  }));
  await createEndpointsAt(database, endpoints, credentials);
}

/** The custom header value of the credentials scenarios' endpoints. */
export const BENCH_AUTHORIZATION = "Bearer bench-0123456789abcdefghijklmnopqrstuvwxyz";

/** Creates the endpoints, in order, through Postel's API. */
export async function createEndpointsAt(
  database: Pick<BenchDatabase, "sql">,
  endpoints: { url: string; types: string[]; tenantId?: string; headers?: Record<string, string> }[],
  credentials?: BenchCredentials,
): Promise<void> {
  const storage = PostgresStorage({ sql: database.sql }, { migrate: false });
  const postel = Postel({
    outbound: {
      storage,
      http: { allowPrivateNetworks: true },
      ...(credentials === undefined ? {} : { credentials: credentialsOption(credentials) }),
    },
  });
  for (const endpoint of endpoints) await postel.outbound.endpoints.create(endpoint);
}

/** Pre-enqueues messages, starts one Postel worker process and times it until every delivery is recorded. */
export async function drainWithPostel(base: string, options: DrainOptions): Promise<DrainMeasurement> {
  const database = options.database ?? (await createBenchDatabase());
  try {
    if (!options.database) {
      await createEndpoints(database, base, options.endpoints, options.worker?.credentials);
    }
    await seedMessages(
      database.sql,
      options.messages,
      options.prefix,
      undefined,
      options.traceContext ?? null,
    );
    const deliveries = options.messages * options.endpoints;
    const config: PostelWorkerConfig = {
      url: database.url,
      target: deliveries,
      // Postel's own default (workers.concurrency "auto"); BENCH_CONCURRENCY fixes it.
      ...(process.env["BENCH_CONCURRENCY"] ? { concurrency: Number(process.env["BENCH_CONCURRENCY"]) } : {}),
      ...(process.env["BENCH_BATCH"] ? { batchSize: Number(process.env["BENCH_BATCH"]) } : {}),
      ...options.worker,
    };
    return await timeWorker("postel-worker", config, options, postgresMeter(database));
  } finally {
    if (!options.database) await database.drop();
  }
}

/**
 * Issue 25's harness: `messages` sent through `send()` by concurrent callers into a fresh database
 * in `state` (see table-state.ts; `history` finished messages beside them), then one Postel worker
 * process with its defaults drains them to one endpoint, timed from a CHECKPOINT.
 */
export async function drainStateWithPostel(
  base: string,
  options: Omit<DrainOptions, "endpoints" | "database" | "prefix" | "traceContext"> & {
    state: TableState;
    history: number;
  },
): Promise<DrainMeasurement> {
  const database = await createBenchDatabase();
  try {
    await createEndpointsAt(database, [{ url: `${base}/hooks/0`, types: ["*"], ...tenantOf() }]);
    await prepareTableState(database, options.state, options.messages, options.history, options.log);
    const library = process.env["POSTEL_BENCH_LIBRARY"]?.match(/baseline-(\w+)/)?.[1] ?? "this-build";
    const config: PostelWorkerConfig = {
      url: database.url,
      target: options.messages,
      explainLabel: `${options.state}-${library}`,
      ...options.worker,
    };
    return await timeWorker("postel-worker", config, options, postgresMeter(database));
  } finally {
    await database.drop();
  }
}

/** Fills the naive table (one row per message × endpoint) and times the 4 hand-written loops. */
export async function drainNaive(base: string, options: DrainOptions): Promise<DrainMeasurement> {
  const database = await createBenchDatabase();
  try {
    const targets = Array.from({ length: options.endpoints }, (_, i) => ({
      url: `${base}/hooks/${i}`,
      secret: generateSecret(),
    }));
    await seedNaive(database.sql, options.messages, targets);
    const config: WorkerConfig = {
      url: database.url,
      target: options.messages * options.endpoints,
      concurrency: 4,
    };
    return await timeWorker("naive-worker", config, options, postgresMeter(database));
  } finally {
    await database.drop();
  }
}

/**
 * The same pre-enqueued rows through the minimal loop (`minimal-worker.ts`): the ceiling a
 * claim-sign-POST-complete worker reaches here, with none of Postel's bookkeeping.
 */
export async function drainMinimal(base: string, options: DrainOptions): Promise<DrainMeasurement> {
  const database = await createBenchDatabase();
  try {
    await seedNaive(database.sql, options.messages, [{ url: `${base}/hooks/0`, secret: generateSecret() }]);
    const config: WorkerConfig = { url: database.url, target: options.messages, concurrency: 128 };
    return await timeWorker("minimal-worker", config, options, postgresMeter(database));
  } finally {
    await database.drop();
  }
}

/** The peer queues' worker processes (`src/peer-*.ts`). */
export type PeerScript = "peer-graphile-worker" | "peer-pg-boss";

/**
 * A peer queue on a fresh database: its worker process installs its schema and enqueues the jobs with
 * its own bulk API before it reports `ready`, then is timed like the others from a CHECKPOINT.
 */
export async function drainPeer(
  script: PeerScript,
  base: string,
  options: DrainOptions & { concurrency: number },
): Promise<DrainMeasurement> {
  const database = await createBenchDatabase();
  try {
    const config: PeerWorkerConfig = {
      url: database.url,
      target: options.messages,
      concurrency: options.concurrency,
      endpoint: { url: `${base}/hooks/0`, secret: generateSecret() },
      body: PAYLOAD,
    };
    return await timeWorker(script, config, options, postgresMeter(database));
  } finally {
    await database.drop();
  }
}

/** What the database server spent on a measured phase: CPU milliseconds and, on PostgreSQL, WAL. */
export interface ServerCost {
  cpuMs: number;
  wal?: WalVolume;
}

/**
 * Starts measuring the database server's cost right before a phase; the function it returns ends
 * the measurement right after it.
 */
export type ServerMeter = () => Promise<() => Promise<ServerCost>>;

/**
 * The PostgreSQL backends serving `database`: their CPU, and the cluster's WAL from a CHECKPOINT
 * issued at the start (BENCH_WAL_BREAKDOWN=1 also breaks the WAL down by relation and record type).
 */
export const postgresMeter =
  (database: BenchDatabase): ServerMeter =>
  async () => {
    const wal = await startWal(database.sql);
    const cpuBefore = await backendCpuMs(database.sql, database.name);
    return async () => {
      const range = await endWal(database.sql, wal);
      const cpuMs = (await backendCpuMs(database.sql, database.name)) - cpuBefore;
      return { cpuMs, wal: await inspectWal(database.sql, range, !!process.env["BENCH_WAL_BREAKDOWN"]) };
    };
  };

/** Starts a worker process, sends `go` and times it until it reports `done`; then stops it. */
export async function timeWorker(
  script: string,
  config: PostelWorkerConfig,
  options: Pick<DrainOptions, "label" | "log" | "receiver">,
  server: ServerMeter,
): Promise<DrainMeasurement> {
  const worker = Child.start<WorkerReport, WorkerCommand>(script, config);
  try {
    await worker.next("ready", 30_000);
    worker.onProgress = (report) => {
      if (report.type === "progress") {
        options.log(
          `  ${options.label}: ${report.delivered.toLocaleString("en-US")}/${config.target.toLocaleString("en-US")}`,
        );
      }
    };
    const serverCost = await server();
    options.receiver.send({ type: "stats" });
    const receiverBefore = (await options.receiver.next("stats", 10_000)).cpuMs;
    worker.send({ type: "go" });
    const done = await worker.next("done", 15 * 60_000);
    const { cpuMs: databaseMs, wal } = await serverCost();
    options.receiver.send({ type: "stats" });
    const receiverMs = (await options.receiver.next("stats", 10_000)).cpuMs - receiverBefore;
    worker.send({ type: "stop" });
    await worker.next("stopped", 30_000).catch(() => undefined);
    await worker.exited(5_000);
    const perSecond = (done.delivered / done.elapsedMs) * 1000;
    const per1k = (ms: number) => (ms / done.delivered) * 1000;
    const cpuPer1k = { worker: per1k(done.cpuMs), database: per1k(databaseMs), receiver: per1k(receiverMs) };
    options.log(
      `  ${options.label}: ${Math.round(perSecond).toLocaleString("en-US")}/s, peak RSS ` +
        `${Math.round(done.peakRssBytes / 2 ** 20)} MB, CPU ms per 1,000 deliveries: worker ` +
        `${Math.round(cpuPer1k.worker)}${config.storage === "sqlite" ? " (SQLite included)" : `, postgres ${Math.round(cpuPer1k.database)}`}` +
        `, receiver ${Math.round(cpuPer1k.receiver)}` +
        (wal ? `; ${describeWal(wal, done.delivered)}` : ""),
    );
    if (wal) for (const line of describeWalBreakdown(wal, done.delivered)) options.log(line);
    return {
      deliveries: done.delivered,
      elapsedMs: done.elapsedMs,
      perSecond,
      peakRssBytes: done.peakRssBytes,
      cpuPer1k,
      ...(wal ? { wal } : {}),
    };
  } finally {
    await worker.kill();
  }
}
