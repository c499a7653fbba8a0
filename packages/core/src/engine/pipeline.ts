import type { TimerHandle } from "../clock.js";
import type { ClaimedDelivery } from "../storage/records.js";
import { claimWork } from "./claim-work.js";
import { type DeliveryResult, deliver } from "./deliver.js";
import {
  type BatchContext,
  type BatchSummary,
  emptySummary,
  planBatch,
  recordResults,
  renewWhileWorking,
  skipped,
} from "./process-batch.js";

const MAX_ERROR_BACKOFF_MS = 30_000;
const MAX_FLUSH = 500;
// How long a finished delivery's outcome may wait for others to share its write.
const LINGER_MS = 10;

/** How the pipeline waits: on the injected clock, woken early by `wake()`/`stop()`. */
export interface PipelineControl {
  running(): boolean;
  sleep(ms: number): Promise<void>;
}

/**
 * The worker pool of `postel.start()`. Deliveries run independently, up to `concurrency` at once:
 * the claimer tops the pool up as requests finish (no batch waits for its slowest request), and
 * outcomes are group-committed, one `recordOutcomes` at a time, in batches of up to `batchSize`
 * (or whatever finished within a 10 ms linger, or everything once nothing is in flight). Leases of everything claimed but not yet recorded are renewed
 * every half lease.
 */
export class Pipeline {
  readonly #leased = new Map<string, ClaimedDelivery>();
  readonly #summary: BatchSummary = emptySummary();
  #inFlight = 0;
  #buffer: DeliveryResult[] = [];
  #flushing: Promise<void> | null = null;
  #slotFreed: (() => void) | null = null;
  #linger: TimerHandle | null = null;
  #errorBackoff = 0;

  constructor(
    private readonly ctx: BatchContext,
    private readonly control: PipelineControl,
  ) {}

  /** Claims and delivers until `control.running()` turns false, then settles everything in flight. */
  async run(): Promise<void> {
    const renewal = renewWhileWorking(this.ctx, () => this.#leased.values());
    try {
      while (this.control.running()) await this.#fill();
      while (this.#inFlight > 0) await this.#nextSlot();
      await this.#flushAll();
    } finally {
      renewal.cancel();
      this.#linger?.cancel();
    }
  }

  async #fill(): Promise<void> {
    const { concurrency, batchSize, pollIntervalMs } = this.ctx.config.workers;
    const free = concurrency - this.#inFlight;
    // Claim in reasonable batches: with a busy pool, wait for half a batch of free slots.
    if (this.#inFlight > 0 && free < Math.min(batchSize, concurrency) / 2) return this.#nextSlot();
    let claimed: ClaimedDelivery[];
    try {
      const work = await claimWork(this.ctx, Math.min(batchSize, free));
      claimed = work.deliveries;
      this.#errorBackoff = 0;
    } catch (error) {
      return this.#backOff(error, "claiming work");
    }
    if (claimed.length === 0) return this.control.sleep(pollIntervalMs);
    for (const c of claimed) this.#leased.set(c.delivery.id, c);
    let plans: Awaited<ReturnType<typeof planBatch>>;
    try {
      plans = await planBatch(this.ctx, claimed);
    } catch (error) {
      // Unplanned claims stay leased and are simply due again when their lease expires.
      for (const c of claimed) this.#leased.delete(c.delivery.id);
      return this.#backOff(error, "planning deliveries");
    }
    const bodies = new Map<string, Uint8Array>();
    for (const p of plans) {
      if (p.kind === "skip") {
        this.#buffer.push(skipped(p));
        continue;
      }
      this.#inFlight++;
      void deliver(this.ctx, p.claimed, p.endpoint, bodies, p.probeSlot).then(
        (result) => this.#finished(result),
        (error: unknown) => this.#finished(null, p.claimed, error),
      );
    }
    this.#flush();
  }

  #finished(result: DeliveryResult | null, claimed?: ClaimedDelivery, error?: unknown): void {
    this.#inFlight--;
    if (result) this.#buffer.push(result);
    else if (claimed) {
      // deliver() catches network failures as values; this is a bug, not an outcome. The lease lapses.
      this.#leased.delete(claimed.delivery.id);
      this.ctx.events.emit("error", { error, context: "delivering" });
    }
    this.#flush();
    const wake = this.#slotFreed;
    this.#slotFreed = null;
    wake?.();
  }

  #nextSlot(): Promise<void> {
    return new Promise((resolve) => {
      this.#slotFreed = resolve;
    });
  }

  /**
   * Records buffered outcomes, in batches: at once when a batch is full or nothing is in flight,
   * otherwise after a short linger so finished deliveries share a write. One flush runs at a time;
   * when it ends, the next is considered.
   */
  #flush(force = false): void {
    if (this.#flushing || this.#buffer.length === 0) return;
    const full = this.#buffer.length >= this.ctx.config.workers.batchSize;
    if (!force && !full && this.#inFlight > 0 && this.control.running()) {
      this.#linger ??= this.ctx.clock.setTimer(() => {
        this.#linger = null;
        this.#flush(true);
      }, LINGER_MS);
      return;
    }
    this.#linger?.cancel();
    this.#linger = null;
    const batch = this.#buffer.splice(0, MAX_FLUSH);
    this.#flushing = recordResults(this.ctx, batch, this.#summary)
      .then(
        () => {
          for (const r of batch) this.#leased.delete(r.outcome.deliveryId);
        },
        async (error: unknown) => {
          // Keep the outcomes and try again: the leases are still renewed meanwhile.
          this.#buffer.unshift(...batch);
          await this.#backOff(error, "recording outcomes");
        },
      )
      .finally(() => {
        this.#flushing = null;
        // After stop(), run() drives the last flushes (bounded), so a dead database cannot spin here.
        if (this.control.running()) this.#flush();
      });
  }

  async #flushAll(): Promise<void> {
    for (let round = 0; (this.#flushing || this.#buffer.length > 0) && round < 10; round++) {
      this.#flush(true);
      await this.#flushing;
    }
  }

  async #backOff(error: unknown, context: string): Promise<void> {
    this.ctx.events.emit("error", { error, context });
    // Repeated failures (e.g. the database restarting) back off up to 30 s.
    this.#errorBackoff = Math.min(
      MAX_ERROR_BACKOFF_MS,
      Math.max(this.ctx.config.workers.pollIntervalMs, this.#errorBackoff * 2),
    );
    await this.control.sleep(this.#errorBackoff);
  }
}
