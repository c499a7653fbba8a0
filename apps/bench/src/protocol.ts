/**
 * Messages between the bench orchestrator and its child processes (receiver, workers, sender), sent
 * over Node's IPC channel. Each child takes its configuration as one JSON argument.
 */

/** Epoch milliseconds with sub-millisecond precision, comparable across processes on one machine. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

/** Configuration of `receiver.js`. */
export interface ReceiverConfig {
  /** Record the arrival time of each `webhook-id` (wake-up latency); otherwise only count. */
  recordArrivals: boolean;
}

/** What the receiver reports. */
export type ReceiverReport =
  | { type: "ready"; port: number }
  | { type: "stats"; count: number; arrivals: [string, number][]; cpuMs: number };

/** What the orchestrator asks the receiver. */
export type ReceiverCommand = { type: "stats" } | { type: "reset"; recordArrivals: boolean };

/** Which database a run uses: a PostgreSQL server, or a SQLite file. */
export type StorageKind = "postgres" | "sqlite";

/** SQLite's `synchronous` for a run: `full` fsyncs every commit (Postel's default), `normal` does not. */
export type Synchronous = "full" | "normal";

/** Configuration of `postel-worker.js`, `naive-worker.js` and `naive-sqlite-worker.js`. */
export interface WorkerConfig {
  /** A PostgreSQL URL, or a `file:` URL of a SQLite database. */
  url: string;
  /** Which storage `url` is (default postgres). */
  storage?: StorageKind;
  /** SQLite only: `synchronous` of the worker's writes (default full). */
  synchronous?: Synchronous;
  /** Deliveries after which the worker reports `done`; 0 = run until stopped. */
  target: number;
  /** Postel: `workers.concurrency`; naive: the number of loops. */
  concurrency: number;
  /** Postel only: `workers.batchSize`. */
  batchSize?: number;
}

/** What a worker reports. `peakRssBytes` is the kernel's high-water mark (VmHWM) when available. */
export type WorkerReport =
  | { type: "ready" }
  | { type: "started" }
  | { type: "progress"; delivered: number }
  | { type: "done"; delivered: number; elapsedMs: number; peakRssBytes: number; cpuMs: number }
  | { type: "stopped"; delivered: number; peakRssBytes: number };

/** What the orchestrator tells a worker. */
export type WorkerCommand = { type: "go" } | { type: "stop" };

/** Configuration of `sender.js` (the cross-process wake-up scenario). */
export interface SenderConfig {
  url: string;
  count: number;
  /** Pause between sends, so each wake-up is measured on its own. */
  intervalMs: number;
}

/** What the sender reports: per message id, when `send()` returned (the commit was acknowledged). */
export type SenderReport = { type: "ready" } | { type: "sent"; commits: [string, number][] };

/** What the orchestrator tells the sender. */
export type SenderCommand = { type: "go" };

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

/** Sends a message to the parent process (children only). */
export function report<T>(message: T): void {
  process.send?.(message);
}

/** The JSON configuration a child was started with. */
export function childConfig<T>(): T {
  const raw = process.argv[2];
  if (raw === undefined) throw new Error("bench child started without its JSON configuration argument");
  return JSON.parse(raw) as T;
}
