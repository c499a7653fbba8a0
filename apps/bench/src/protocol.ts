import type { Duration } from "@postel/core";
/**
 * Messages between the bench orchestrator and its child processes (receiver, workers, sender), sent
 * over Node's IPC channel. Each child takes its configuration as one JSON argument.
 */

/** Epoch milliseconds with sub-millisecond precision, comparable across processes on one machine. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

/** How one receiver endpoint answers a POST, after reading its body. */
export type Behaviour =
  /** 200 at once. */
  | { kind: "ok" }
  /** 200 after `ms` (a real timer: the connection stays busy meanwhile). */
  | { kind: "delay"; ms: number }
  /** Never answers: the connection stays open until the client gives up. */
  | { kind: "hang" }
  /** Status 200 and headers at once, then one body byte every `intervalMs`, never finishing. */
  | { kind: "trickle"; intervalMs: number }
  /** `status` (e.g. 500) at once: an endpoint that is down. */
  | { kind: "fail"; status: number };

/** What the receiver keeps of the requests one endpoint receives. */
export type Recording =
  /** The request count only (the cheapest: throughput scenarios). */
  | "count"
  /** Also the distinct `webhook-id`s, so retries do not count twice, and when the latest new one arrived. */
  | "ids"
  /** Also every request's `webhook-id` and arrival time, sent on `log`. */
  | "log";

/** One endpoint of the receiver: its own server on its own port, so its own origin (connection pool). */
export interface ReceiverEndpoint {
  respond: Behaviour;
  record: Recording;
}

/** Configuration of `receiver.js`. */
export interface ReceiverConfig {
  /** Record the arrival time of each `webhook-id` (wake-up latency); otherwise only count. */
  recordArrivals: boolean;
  /** One server per entry, each on its own port (default: one that answers 200 and counts). */
  endpoints?: ReceiverEndpoint[];
}

/** What one receiver endpoint has received since the last reset. */
export interface EndpointStats {
  requests: number;
  /** Distinct `webhook-id`s (0 when the endpoint records only a count). */
  distinct: number;
  /** When the latest new `webhook-id` arrived (`preciseNow`), 0 before the first. */
  lastNewAt: number;
}

/** What the receiver reports. `port` is the first endpoint's, `ports` every endpoint's in order. */
export type ReceiverReport =
  | { type: "ready"; port: number; ports: number[] }
  | {
      type: "stats";
      count: number;
      arrivals: [string, number][];
      endpoints: EndpointStats[];
      cpuMs: number;
    }
  /** Per endpoint, every request as `[webhook-id, arrival]` (empty unless it records `log`). */
  | { type: "log"; endpoints: [string, number][][] };

/** What the orchestrator asks the receiver. */
export type ReceiverCommand =
  | { type: "stats" }
  | { type: "log" }
  | { type: "reset"; recordArrivals: boolean };

/** Which database a run uses: a PostgreSQL server, or a SQLite file. */
export type StorageKind = "postgres" | "sqlite";

/** SQLite's `synchronous` for a run: `full` fsyncs every commit (Postel's default), `normal` does not. */
export type Synchronous = "full" | "normal";

/** Configuration of the worker processes (Postel's, the naive loops, the minimal loop). */
export interface WorkerConfig {
  /** A PostgreSQL URL, or a `file:` URL of a SQLite database. */
  url: string;
  /** Which storage `url` is (default postgres). */
  storage?: StorageKind;
  /** SQLite only: `synchronous` of the worker's writes (default full). */
  synchronous?: Synchronous;
  /** Deliveries after which the worker reports `done`; 0 = run until stopped. */
  target: number;
  /** Postel: `workers.concurrency`; naive: the number of loops; peers: their concurrency setting. */
  concurrency: number;
  /** Postel only: `workers.batchSize`. */
  batchSize?: number;
}

/**
 * Configuration of the peer queues' workers (`peer-graphile-worker.js`, `peer-pg-boss.js`): before
 * `ready` each enqueues `target` jobs with its own bulk API, one per webhook to `endpoint`.
 */
export interface PeerWorkerConfig extends WorkerConfig {
  endpoint: { url: string; secret: string };
  /** Every job's body (the drain's payload). */
  body: string;
}

/**
 * Telemetry of a Postel worker (the telemetry scenario): off, or on with the OTel SDK exporting to a
 * no-op exporter (`noop`) or to its in-memory exporters (`memory`).
 */
export type TelemetryMode = "off" | "sdk" | "sampled" | "noop" | "memory";

/** How a credentials scenario stores endpoint credentials: encrypted with a base64 key, or plain text. */
export type BenchCredentials = { key: string } | "off";

/** Postel's `outbound.credentials` for a bench's `credentials` setting. */
export function credentialsOption(credentials: BenchCredentials) {
  return credentials === "off"
    ? { encryption: "off" as const }
    : { keys: [{ id: "bench", key: credentials.key }] };
}

/** Configuration of `postel-worker.js`: without `concurrency`, Postel's own default applies. */
export type PostelWorkerConfig = Omit<WorkerConfig, "concurrency"> & {
  concurrency?: number;
  /** Postel's `outbound.retention`: the worker prunes old history while it drains (retention scenarios). */
  retention?: { maxAge: Duration; interval: Duration };
  telemetry?: TelemetryMode;
  /**
   * Postel's `outbound.credentials` (the credentials scenarios): `{ key }` encrypts with that base64
   * key (id "bench"), `"off"` stores plain text without the start-up warning; absent, the option is left out.
   */
  credentials?: BenchCredentials;
  /** With BENCH_EXPLAIN: the file name prefix of the captured plans. */
  explainLabel?: string;
};

/** What a worker reports. `peakRssBytes` is the kernel's high-water mark (VmHWM) when available. */
export type WorkerReport =
  | { type: "ready" }
  /** `at`: when the loop was started (`preciseNow`, just before `postel.start()`). */
  | { type: "started"; at: number }
  | { type: "progress"; delivered: number }
  | { type: "done"; delivered: number; elapsedMs: number; peakRssBytes: number; cpuMs: number }
  | { type: "stopped"; delivered: number; peakRssBytes: number };

/** What the orchestrator tells a worker. */
export type WorkerCommand = { type: "go" } | { type: "stop" };

/** Configuration of `sender.js` (the cross-process wake-up scenarios). */
export interface SenderConfig {
  url: string;
  /** Messages sent, at most. */
  count: number;
  /** Pause between sends, so each wake-up is measured on its own. */
  intervalMs: number;
  /** The messages' event type (default `order.created`). */
  type?: string;
  /** On `stop`, keep sending until this many were sent (default: stop at once). */
  minCount?: number;
  /** Count a failed `send()` and go on (a failover); by default a failure ends the sender. */
  tolerateFailures?: boolean;
  /** Send message `i` with the ordering key `quiet_<i % orderingKeys>` (default: no key). */
  orderingKeys?: number;
}

/** What the sender reports: per message id, when `send()` returned (the commit was acknowledged). */
export type SenderReport =
  | { type: "ready" }
  /** `failures`: sends that failed (only with `tolerateFailures`), by error code. */
  | { type: "sent"; commits: [string, number][]; failures?: Record<string, number> };

/** What the orchestrator tells the sender: start, or stop early (once `minCount` were sent). */
export type SenderCommand = { type: "go" } | { type: "stop" };

/** Peak resident set size of this process: VmHWM from /proc on Linux, else the current RSS. */
export async function peakRss(): Promise<number> {
  try {
    const { readFile } = await import("node:fs/promises");
    const status = await readFile("/proc/self/status", "utf8");
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(status);
    if (match?.[1]) return Number(match[1]) * 1024;
  } catch {
    // Not Linux: fall through to the current RSS.
  }
  return process.memoryUsage.rss();
}

/** CPU time (user + system) this process has used, in milliseconds. */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Sends a message to the parent process (children only), unless the parent has gone. */
export function report<T>(message: T): void {
  if (process.connected) process.send?.(message);
}

/** The JSON configuration a child was started with. */
export function childConfig<T>(): T {
  const raw = process.argv[2];
  if (raw === undefined) throw new Error("bench child started without its JSON configuration argument");
  return JSON.parse(raw) as T;
}
