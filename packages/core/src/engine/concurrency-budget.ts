import { monitorEventLoopDelay } from "node:perf_hooks";
import type { Clock, TimerHandle } from "../clock.js";

/** How often the budget is reconsidered (clock ms). */
const ADJUST_EVERY_MS = 100;
/** A step up multiplies the budget by this: 256 → 1,024 in one step. */
const STEP = 4;
/**
 * Intervals a step up is judged on, by the requests completed in them against as many intervals
 * before it: four, so waves of requests to receivers that answer in about one interval decide nothing.
 */
const JUDGED_OVER = 4;
/** A step up is kept when it got this much more done. */
const WORTH_IT = 1.1;
/** After a step up that did not pay, how long the budget first stays put; each further miss doubles it. */
const HOLD_MS = 1_000;
const MAX_HOLD_MS = 30_000;
/**
 * No step up in a pool's first half second: a pool that has just started gets more done every interval
 * anyway (connections open, code warms up), which would make any step look worth it.
 */
const SETTLE_MS = 500;
/** A budget nothing has pressed on for this long steps back down (halves). */
const SHRINK_AFTER_MS = 10_000;

/** Mean delay of this process's event loop since the previous call, in ms. */
export type LoopLag = () => number;

/** Measures the event loop's delay with Node's histogram (5 ms resolution); call `stop` when done. */
export function eventLoopLag(): LoopLag & { stop(): void } {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  const lag = () => {
    const mean = histogram.count === 0 ? 0 : histogram.mean / 1e6;
    histogram.reset();
    return mean;
  };
  return Object.assign(lag, { stop: () => histogram.disable() });
}

/** A step up on trial. */
interface Trial {
  /** The budget before the step, to go back to. */
  from: number;
  /** Requests completed in the `JUDGED_OVER` intervals before it. */
  before: number;
  /** Intervals still to wait while the new slots fill and their first requests finish. */
  warmUp: number;
  judged: number[];
}

/**
 * The pool's in-flight budget. A number in the options fixes it. By default (`"auto"`) it follows the
 * load between `min` and `max`. The pipeline presses on it when requests seem to wait on the network
 * rather than on this machine (see `FairShare.waiting`, which compares their latency with the event
 * loop's delay measured here): work of endpoints answering in tens or hundreds of milliseconds was
 * held back for want of room, or such requests fill the pool while more work waits. Then 100 ms
 * later the budget grows fourfold, up to `max` (what memory and sockets allow): 100 endpoints
 * answering in 100 ms need ~500 requests in flight to reach 5,000/s, not 128. Latency alone can
 * mislead (a loop blocked by SQLite's synchronous commits makes every answer look slow), so a step
 * up is an experiment: it stands only if the next four intervals completed 10% more requests than the
 * four before it; otherwise the budget goes back and holds, a second and twice as long after each
 * further miss (up to 30 s). Ten seconds without pressure halve it, freeing sockets and memory.
 */
export class ConcurrencyBudget {
  #value: number;
  #pressed = false;
  #pressedAt: number;
  #lagMs = 0;
  #completed = 0;
  /** Requests completed in each of the last `JUDGED_OVER` intervals, oldest first. */
  #recent: number[] = [];
  #trial: Trial | null = null;
  #holdUntil = Number.NEGATIVE_INFINITY;
  #holdMs = HOLD_MS;
  #timer: TimerHandle | null = null;
  #startedAt = 0;

  constructor(
    private readonly min: number,
    private readonly max: number,
    private readonly clock: Clock,
    private readonly lag: LoopLag = () => 0,
  ) {
    this.#value = min;
    this.#pressedAt = clock.now();
  }

  /** Requests the pool may have in flight now. */
  get value(): number {
    return this.#value;
  }

  /** The event loop's mean delay over the last interval (ms): how late this process handles answers. */
  get lagMs(): number {
    return this.#lagMs;
  }

  /** Called when a bigger pool would seem to deliver more (requests wait on the network). */
  press(): void {
    this.#pressed = true;
    this.#pressedAt = this.clock.now();
  }

  /** Called for every request that finished. */
  completed(): void {
    this.#completed++;
  }

  /** Starts adjusting (no-op for a fixed budget). */
  start(): void {
    if (this.min === this.max || this.#timer !== null) return;
    this.#startedAt = this.clock.now();
    this.#timer = this.clock.setTimer(() => this.#adjust(), ADJUST_EVERY_MS);
  }

  stop(): void {
    this.#timer?.cancel();
    this.#timer = null;
  }

  #adjust(): void {
    const now = this.clock.now();
    this.#lagMs = this.lag();
    const completed = this.#completed;
    this.#completed = 0;
    this.#recent.push(completed);
    if (this.#recent.length > JUDGED_OVER) this.#recent.shift();
    if (this.#trial !== null) this.#judge(this.#trial, completed, now);
    else if (
      this.#pressed &&
      now >= this.#holdUntil &&
      now - this.#startedAt >= SETTLE_MS &&
      this.#value < this.max
    ) {
      const before = (this.#recent.reduce((sum, n) => sum + n, 0) * JUDGED_OVER) / this.#recent.length;
      this.#trial = { from: this.#value, before, warmUp: 1, judged: [] };
      this.#value = Math.min(this.max, this.#value * STEP);
    } else if (now - this.#pressedAt >= SHRINK_AFTER_MS) {
      this.#value = Math.max(this.min, Math.floor(this.#value / 2));
      this.#pressedAt = now;
    }
    this.#pressed = false;
    this.#timer = this.clock.setTimer(() => this.#adjust(), ADJUST_EVERY_MS);
  }

  #judge(trial: Trial, completed: number, now: number): void {
    if (trial.warmUp > 0) {
      trial.warmUp--;
      return;
    }
    trial.judged.push(completed);
    if (trial.judged.length < JUDGED_OVER) return;
    this.#trial = null;
    const after = trial.judged.reduce((sum, n) => sum + n, 0);
    if (after >= trial.before * WORTH_IT) {
      this.#holdMs = HOLD_MS;
      return;
    }
    this.#value = trial.from;
    this.#holdUntil = now + this.#holdMs;
    this.#holdMs = Math.min(MAX_HOLD_MS, this.#holdMs * 2);
  }
}
