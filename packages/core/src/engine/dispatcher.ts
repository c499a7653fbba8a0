import type { Clock, TimerHandle } from "../clock.js";
import { type Duration, toMs } from "../duration.js";
import type { EndpointCache } from "./endpoint-cache.js";
import { fanOut } from "./fanout.js";
import { type BatchContext, type BatchSummary, emptySummary, processBatch } from "./process-batch.js";

/** Options of `postel.drain()`. */
export interface DrainOptions {
  /** Stop after this many deliveries were processed. */
  maxMessages?: number;
  /** Stop starting new batches after this long (a Duration) or at this time (a Date). */
  deadline?: Duration | Date;
}

/** What `drain()` did. */
export interface DrainResult extends BatchSummary {
  /** Messages fanned out to their endpoints. */
  fannedOut: number;
}

/** What the dispatcher needs. */
export interface DispatcherContext extends BatchContext {
  cache: EndpointCache;
}

const MAX_ERROR_BACKOFF_MS = 30_000;

/**
 * The worker pool: lanes that each claim a batch (new messages first, then due retries), deliver it,
 * and record it. Several lanes overlap, so the next claim runs while requests are in flight.
 */
export class Dispatcher {
  #running = false;
  #lanes: Promise<void>[] = [];
  #sleepers = new Set<() => void>();
  #wakeRequested = false;

  constructor(private readonly ctx: DispatcherContext) {}

  get running(): boolean {
    return this.#running;
  }

  /** Starts the lanes; resolves at once. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    const { concurrency, batchSize } = this.ctx.config.workers;
    const lanes = Math.max(1, Math.floor(concurrency / batchSize));
    const size = Math.max(1, Math.min(batchSize, concurrency));
    this.#lanes = Array.from({ length: lanes }, () => this.#lane(size));
  }

  /** Stops claiming; resolves when in-flight batches are recorded. */
  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    this.wake();
    await Promise.all(this.#lanes);
    this.#lanes = [];
  }

  /** Wakes idle lanes now (a local `send()` or a cross-process notification). */
  wake(): void {
    this.#wakeRequested = true;
    for (const wake of this.#sleepers) wake();
    this.#sleepers.clear();
  }

  /** One bounded pass over the work due now; never waits for future retries. */
  async drain(options: DrainOptions = {}): Promise<DrainResult> {
    const { clock, config } = this.ctx;
    const started = clock.now();
    const deadline =
      options.deadline === undefined
        ? Number.POSITIVE_INFINITY
        : options.deadline instanceof Date
          ? options.deadline.getTime()
          : started + toMs(options.deadline, "drain deadline");
    const max = options.maxMessages ?? Number.POSITIVE_INFINITY;
    const result: DrainResult = { ...emptySummary(), fannedOut: 0 };
    let processed = 0;
    while (processed < max && clock.now() < deadline) {
      const limit = Math.min(config.workers.batchSize, max - processed);
      const done = await this.#step(limit, result);
      if (done === 0) break;
      processed += done;
    }
    return result;
  }

  /** Fan out new messages, top up with due deliveries, deliver. Returns the work done (0 = idle). */
  async #step(limit: number, summary: DrainResult): Promise<number> {
    const { config, clock } = this.ctx;
    const fanned = await fanOut(this.ctx, limit);
    summary.fannedOut += fanned.messages;
    const batch = fanned.deliveries;
    if (batch.length < limit) {
      const now = clock.now();
      const due = await config.storage.claimDue({
        owner: config.workers.id,
        now,
        until: now + config.workers.leaseDurationMs,
        limit: limit - batch.length,
      });
      batch.push(...due);
    }
    await processBatch(this.ctx, batch, summary);
    return fanned.messages + batch.length;
  }

  async #lane(size: number): Promise<void> {
    const { clock, config, events } = this.ctx;
    const summary: DrainResult = { ...emptySummary(), fannedOut: 0 };
    let errorBackoff = 0;
    while (this.#running) {
      this.#wakeRequested = false;
      let done = 0;
      try {
        done = await this.#step(size, summary);
        errorBackoff = 0;
      } catch (error) {
        events.emit("error", { error, context: "worker loop" });
        // Back off on repeated failures (e.g. the database restarting), up to 30 s.
        errorBackoff = Math.min(
          MAX_ERROR_BACKOFF_MS,
          Math.max(config.workers.pollIntervalMs, errorBackoff * 2),
        );
        await this.#sleep(clock, errorBackoff);
        continue;
      }
      if (done === 0 && this.#running) await this.#sleep(clock, config.workers.pollIntervalMs);
    }
  }

  /** Sleeps on the injected clock; `wake()` and `stop()` end it early. */
  #sleep(clock: Clock, ms: number): Promise<void> {
    if (this.#wakeRequested || !this.#running) return Promise.resolve();
    return new Promise((resolve) => {
      let timer: TimerHandle | undefined;
      const done = () => {
        timer?.cancel();
        this.#sleepers.delete(done);
        resolve();
      };
      this.#sleepers.add(done);
      timer = clock.setTimer(done, ms);
    });
  }
}
