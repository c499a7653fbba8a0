import { type Clock, sleep, type TimerHandle } from "../clock.js";
import type { RetentionSettings } from "../config/resolved.js";
import { runPrunePass } from "../outbound/prune.js";
import type { Random } from "../random.js";
import type { RetentionStore } from "../storage/storage.js";
import type { Emitter } from "./events.js";

/** What the retention loop needs. */
export interface RetentionContext {
  storage: RetentionStore;
  clock: Clock;
  random: Random;
  events: Emitter;
}

/**
 * The workers' retention: every `interval` (±25% jitter, so instances started together drift apart)
 * one prune pass, a batch at a time with a pause between batches as long as the batch took, so
 * retention holds at most one connection about half the time. A failing pass is reported as an
 * `error` event and the next one runs on schedule.
 */
export class RetentionLoop {
  #timer: TimerHandle | null = null;
  #pass: Promise<void> | null = null;
  #abort: AbortController | null = null;

  constructor(
    private readonly ctx: RetentionContext,
    private readonly settings: RetentionSettings,
  ) {}

  /** Schedules the first pass; resolves at once. */
  start(): void {
    if (this.#abort) return;
    const abort = new AbortController();
    this.#abort = abort;
    this.#schedule(abort.signal);
  }

  /** Cancels the next pass and waits for a running one to finish its batch. */
  async stop(): Promise<void> {
    const abort = this.#abort;
    if (!abort) return;
    this.#abort = null;
    abort.abort();
    this.#timer?.cancel();
    this.#timer = null;
    await this.#pass;
  }

  #schedule(signal: AbortSignal): void {
    const delay = this.settings.intervalMs * (0.75 + 0.5 * this.ctx.random());
    this.#timer = this.ctx.clock.setTimer(() => {
      this.#timer = null;
      this.#pass = this.#run(signal);
    }, delay);
  }

  async #run(signal: AbortSignal): Promise<void> {
    const { storage, clock, events } = this.ctx;
    const finishedBefore = clock.now() - this.settings.maxAgeMs;
    try {
      const result = await runPrunePass(storage, clock, {
        finishedBefore,
        batchSize: this.settings.batchSize,
        signal,
        between: (lastBatchMs) => sleep(clock, lastBatchMs, signal),
      });
      events.emit("pruned", { ...result, finishedBefore });
    } catch (error) {
      events.emit("error", { error, context: "retention (pruning finished history)" });
    } finally {
      this.#pass = null;
      if (!signal.aborted) this.#schedule(signal);
    }
  }
}
