import type { Clock, TimerHandle } from "../clock.js";
import { type Duration, toMs } from "../duration.js";
import type { EndpointCache } from "./endpoint-cache.js";
import { type ClaimShare, claimWork, isLimited, limitedClaim, limitedEndpoints } from "./claim-work.js";
import { Pipeline } from "./pipeline.js";
import { LOST_WAKEUPS_POLL_MS } from "./wakeups.js";
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

/**
 * The worker pool. `start()` runs the `Pipeline` (deliveries flow independently, outcomes are
 * group-committed); `drain()` works batch by batch (claim, deliver, record) so a bounded pass is
 * deterministic under a manual clock.
 */
export class Dispatcher {
  #running = false;
  #pipeline: Promise<void> | null = null;
  #worker: Pipeline | null = null;
  #sleepers = new Set<() => void>();
  #wakeRequested = false;
  #pollFast = false;

  constructor(private readonly ctx: DispatcherContext) {}

  get running(): boolean {
    return this.#running;
  }

  /** Starts the pipeline; resolves at once. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    const pipeline = new Pipeline(this.ctx, {
      running: () => this.#running,
      sleep: (ms) => this.#sleep(this.ctx.clock, ms),
      pollIntervalMs: () =>
        this.#pollFast
          ? Math.min(LOST_WAKEUPS_POLL_MS, this.ctx.config.workers.pollIntervalMs)
          : this.ctx.config.workers.pollIntervalMs,
      // The pipeline's own wakes (a key's next delivery let go) are no news of sent messages.
      wake: () => this.#wakeSleepers(),
    });
    this.#worker = pipeline;
    this.#pipeline = pipeline.run();
  }

  /** Stops claiming; resolves when in-flight batches are recorded. */
  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    this.wake();
    await this.#pipeline;
    this.#pipeline = null;
    this.#worker = null;
  }

  /**
   * While wake-ups from other processes are lost (`fast`), the idle pipeline looks for work every
   * `LOST_WAKEUPS_POLL_MS` instead of every `workers.pollInterval`.
   */
  pollFast(fast: boolean): void {
    if (this.#pollFast === fast) return;
    this.#pollFast = fast;
    if (fast) this.wake();
  }

  /**
   * Wakes the idle pipeline now (a local `send()` or a cross-process notification); a busy one may
   * look for the new messages beside its current claim (`Pipeline.expedite`).
   */
  wake(): void {
    this.#wakeSleepers();
    this.#worker?.expedite();
  }

  /**
   * Work was made due now outside the workers' own claims and outcomes (a replay, a skipped key, an
   * endpoint written): wakes them, and a busy one's next claim looks for due work too.
   */
  dueNow(): void {
    this.#worker?.dueNow();
    this.wake();
  }

  #wakeSleepers(): void {
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

  /**
   * Fan out new messages, top up with due deliveries, deliver. Returns the work done (0 = idle). Every
   * endpoint may take the whole batch, except that endpoints with limits are claimed within them.
   */
  async #step(limit: number, summary: DrainResult): Promise<number> {
    const limited = limitedEndpoints(await this.ctx.cache.recent());
    const share: ClaimShare = {
      messages: limit,
      admit: (endpoint) => !isLimited(endpoint),
      skipEndpoints: limited.map((endpoint) => endpoint.record.id),
      catchUp: 0,
      limited: limited.map((endpoint) => limitedClaim(endpoint, limit)),
    };
    const { fannedOut, deliveries } = await claimWork(this.ctx, limit, share);
    summary.fannedOut += fannedOut;
    await processBatch(this.ctx, deliveries, summary);
    return fannedOut + deliveries.length;
  }

  /** Sleeps on the injected clock; `wake()` and `stop()` end it early. */
  #sleep(clock: Clock, ms: number): Promise<void> {
    if (!this.#running) return Promise.resolve();
    // A wake that arrived while busy is consumed here: the caller looks for work once more.
    if (this.#wakeRequested) {
      this.#wakeRequested = false;
      return Promise.resolve();
    }
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
