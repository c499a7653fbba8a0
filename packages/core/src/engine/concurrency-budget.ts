import { performance } from "node:perf_hooks";
import type { Clock, TimerHandle } from "../clock.js";

/** How often the budget is reconsidered (clock ms). */
const ADJUST_EVERY_MS = 250;
/** Below this share of busy time the event loop has room for more requests. */
const IDLE_ENOUGH = 0.6;
/** Above it, more requests would only queue behind this process's own CPU. */
const BUSY = 0.9;
/** A budget unused for this long steps back down. */
const SHRINK_AFTER_MS = 10_000;

/** Share of the last interval the event loop was busy, in [0, 1]; each call starts a new interval. */
export type LoadProbe = () => number;

/** This process's event-loop utilisation since the previous call. */
export function eventLoopLoad(): LoadProbe {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    return utilization;
  };
}

/**
 * The pool's in-flight budget. A number in the options fixes it. By default (`"auto"`) it follows the
 * load between `min` and `max`: slow receivers hold requests open while this process idles, so when
 * the pool was full and the event loop had time to spare, the budget doubles (100 endpoints answering
 * in 100 ms need ~500 requests in flight to reach 5,000/s, not 128); when this process's own CPU is
 * the bottleneck more requests would only queue, so it stays; once the pool has not been full for
 * ten seconds it halves again, freeing sockets and memory.
 */
export class ConcurrencyBudget {
  #value: number;
  #full = false;
  #lastFullAt: number;
  #timer: TimerHandle | null = null;

  constructor(
    private readonly min: number,
    private readonly max: number,
    private readonly clock: Clock,
    private readonly load: LoadProbe,
  ) {
    this.#value = min;
    this.#lastFullAt = clock.now();
  }

  /** Requests the pool may have in flight now. */
  get value(): number {
    return this.#value;
  }

  /** Called when the pool had no room for due work. */
  full(): void {
    this.#full = true;
    this.#lastFullAt = this.clock.now();
  }

  /** Starts adjusting (no-op for a fixed budget). */
  start(): void {
    if (this.min === this.max || this.#timer !== null) return;
    this.load();
    this.#timer = this.clock.setTimer(() => this.#adjust(), ADJUST_EVERY_MS);
  }

  stop(): void {
    this.#timer?.cancel();
    this.#timer = null;
  }

  #adjust(): void {
    const busy = this.load();
    if (this.#full && busy < IDLE_ENOUGH) this.#value = Math.min(this.max, this.#value * 2);
    else if (busy > BUSY || this.clock.now() - this.#lastFullAt >= SHRINK_AFTER_MS) {
      this.#value = Math.max(this.min, Math.floor(this.#value / 2));
      if (busy <= BUSY) this.#lastFullAt = this.clock.now();
    }
    this.#full = false;
    this.#timer = this.clock.setTimer(() => this.#adjust(), ADJUST_EVERY_MS);
  }
}
