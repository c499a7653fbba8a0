import { Postel } from "@postel/core";
import { generateSecret } from "@postel/signing";
import { SqliteStorage } from "@postel/storage-sqlite";
import {
  BENCH_AUTHORIZATION,
  type DrainMeasurement,
  type Receiver,
  type ServerMeter,
  timeWorker,
} from "./drain-run.js";
import {
  type BenchCredentials,
  credentialsOption,
  type PostelWorkerConfig,
  type Synchronous,
  type WorkerConfig,
} from "./protocol.js";
import {
  type BenchFile,
  createBenchFile,
  createNaiveTable,
  seedSqliteMessages,
  seedSqliteNaive,
} from "./sqlite-file.js";

/** Options of one drain on a SQLite file. */
export interface SqliteDrainOptions {
  /** Messages pre-enqueued (one endpoint, so as many deliveries). */
  messages: number;
  /** `synchronous` of the worker's writes. */
  synchronous: Synchronous;
  log: (line: string) => void;
  label: string;
  receiver: Receiver;
  /** Reuse this file, which already has its endpoint (retention scenario), instead of a fresh one. */
  file?: BenchFile;
  /** Message id prefix (unique per run when the file is reused). */
  prefix?: string;
  /** Postel's `outbound.retention` in the worker. */
  retention?: PostelWorkerConfig["retention"];
  /** The credentials scenario: the endpoint has an `Authorization` header, stored this way. */
  credentials?: BenchCredentials;
}

/** SQLite runs inside the worker process: there is no server whose CPU to add (its WAL is not measured). */
const noServer: ServerMeter = async () => async () => ({ cpuMs: 0 });

/**
 * On a fresh file: migrates, creates one endpoint on the receiver through Postel's API, pre-enqueues
 * the messages, then times one Postel worker process until every delivery is recorded.
 */
export async function drainSqliteWithPostel(
  base: string,
  options: SqliteDrainOptions,
): Promise<DrainMeasurement> {
  const file = options.file ?? (await createBenchFile({ migrate: true }));
  try {
    if (!options.file) await createSqliteEndpoint(file, base, options.credentials);
    await seedSqliteMessages(file.client, options.messages, options.prefix);
    const config: PostelWorkerConfig = {
      url: file.url,
      storage: "sqlite",
      synchronous: options.synchronous,
      target: options.messages,
      // Postel's own default (workers.concurrency "auto"); BENCH_CONCURRENCY fixes it.
      ...(process.env["BENCH_CONCURRENCY"] ? { concurrency: Number(process.env["BENCH_CONCURRENCY"]) } : {}),
      ...(process.env["BENCH_BATCH"] ? { batchSize: Number(process.env["BENCH_BATCH"]) } : {}),
      ...(options.retention ? { retention: options.retention } : {}),
      ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    };
    return await timeWorker("postel-worker", config, options, noServer);
  } finally {
    if (!options.file) await file.remove();
  }
}

/**
 * Creates the one endpoint of a SQLite drain, on the receiver, through Postel's API; with
 * `credentials`, with an `Authorization` header, its credentials stored that way.
 */
export async function createSqliteEndpoint(
  file: BenchFile,
  base: string,
  credentials?: BenchCredentials,
): Promise<void> {
  const postel = Postel({
    outbound: {
      storage: SqliteStorage({ url: file.url }),
      http: { allowPrivateNetworks: true },
      ...(credentials === undefined ? {} : { credentials: credentialsOption(credentials) }),
    },
  });
  await postel.outbound.endpoints.create({
    url: `${base}/hooks/0`,
    types: ["*"],
    ...(credentials === undefined ? {} : { headers: { Authorization: BENCH_AUTHORIZATION } }),
  });
  await postel.close();
}

/** On a fresh file: fills the naive table and times the 4 hand-written loops. */
export async function drainSqliteNaive(base: string, options: SqliteDrainOptions): Promise<DrainMeasurement> {
  const file = await createBenchFile({ migrate: false });
  try {
    await createNaiveTable(file.client);
    await seedSqliteNaive(file.client, options.messages, [
      { url: `${base}/hooks/0`, secret: generateSecret() },
    ]);
    const config: WorkerConfig = {
      url: file.url,
      storage: "sqlite",
      synchronous: options.synchronous,
      target: options.messages,
      concurrency: 4,
    };
    return await timeWorker("naive-sqlite-worker", config, options, noServer);
  } finally {
    await file.remove();
  }
}
