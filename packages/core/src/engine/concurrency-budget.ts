import { performance } from "node:perf_hooks";
import type { Clock, TimerHandle } from "../clock.js";

/** How often the budget is reconsidered (clock ms). */
const ADJUST_EVERY_MS = 100;
/** Below this share of busy time (smoothed) the event loop has room for more requests. */
const IDLE_ENOUGH = 0.85;
/** A step up must raise completions per interval by this much to be kept. */
const WORTH_IT = 1.1;
/** After a step up that did not pay, how long the budget first stays put; each further miss doubles it. */
const HOLD_MS = 1_000;
const MAX_HOLD_MS = 30_000;
/** Intervals a step up is judged on (and compared with as many before it): two, so waves of requests
 * from receivers answering in about one interval do not decide it. */
const JUDGED_OVER = 2;
/** A budget unused for this long steps back down. */
const SHRINK_AFTER_MS = 10_000;

/** A step up multiplies the budget by this: 128 → 512 → 1,024 in two steps. */
const STEP = 4;

/** A step up under trial. */
interface Trial {
  from: number;
  before: number;
  warmUp: number;
  judged: number[];
}

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
 * load between `min` and `max`, by experiment: slow receivers hold requests open while this process
 * idles, so when quick endpoints had work held back for want of room and the event loop has time to
 * spare, the budget grows fourfold, and the step is kept only if requests completed rose by 10% (over two
 * 100 ms intervals, judged after one more that lets the new slots' first requests finish, against
 * the two before the step): 100 endpoints answering in 100 ms need ~500 in flight to reach 5,000/s,
 * not 128. A step that did not pay is undone and the budget holds, for a second and twice as long
 * after each further miss (up to 30 s): when this process's CPU, the database or the receivers are
 * the bottleneck, more in flight only queues. Once nothing
 * has pressed for ten seconds it halves again, freeing sockets and memory.
 */
export class ConcurrencyBudget {
  #value: number;
  #full = false;
  #lastFullAt: number;
  #completed = 0;
  /** Completions in each of the last `JUDGED_OVER` intervals, oldest first. */
  #recent: number[] = [];
  /** Event-loop load, smoothed over intervals (one busy interval is no trend). */
  #busy: number | null = null;
  /** While a step up is on trial: the budget before it, completions before it, intervals left to warm
   * up, and those judged. */
  #trial: Trial | null = null;
  #holdUntil = Number.NEGATIVE_INFINITY;
  #holdMs = HOLD_MS;
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

  /** Called when work that a bigger pool would have started was held back. */
  full(): void {
    this.#full = true;
    this.#lastFullAt = this.clock.now();
  }

  /** Called for every request that finished. */
  completed(): void {
    this.#completed++;
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
    const now = this.clock.now();
    const load = this.load();
    const busy = this.#busy === null ? load : 0.5 * this.#busy + 0.5 * load;
    this.#busy = busy;
    const completed = this.#completed;
    this.#completed = 0;
    this.#recent.push(completed);
    if (this.#recent.length > JUDGED_OVER) this.#recent.shift();
    const trial = this.#trial;
    if (trial !== null) this.#judge(trial, completed, now);
    else if (this.#full && busy < IDLE_ENOUGH && now >= this.#holdUntil && this.#value < this.max) {
      const before = this.#recent.reduce((sum, n) => sum + n, 0) * (JUDGED_OVER / this.#recent.length);
      this.#trial = { from: this.#value, before, warmUp: 1, judged: [] };
      this.#value = Math.min(this.max, this.#value * STEP);
    } else if (now - this.#lastFullAt >= SHRINK_AFTER_MS) {
      this.#value = Math.max(this.min, Math.floor(this.#value / 2));
      this.#lastFullAt = now;
    }
    this.#full = false;
    this.#timer = this.clock.setTimer(() => this.#adjust(), ADJUST_EVERY_MS);
  }

  /** A step up is kept only if the intervals after its warm-up got 10% more done than those before. */
  #judge(trial: Trial, completed: number, now: number): void {
    if (trial.warmUp > 0) {
      // The new slots fill and their first requests finish.
      trial.warmUp--;
      return;
    }
    trial.judged.push(completed);
    if (trial.judged.length < JUDGED_OVER) return;
    const after = trial.judged.reduce((sum, n) => sum + n, 0);
    if (after < trial.before * WORTH_IT) {
      this.#value = trial.from;
      this.#holdUntil = now + this.#holdMs;
      this.#holdMs = Math.min(MAX_HOLD_MS, this.#holdMs * 2);
    } else this.#holdMs = HOLD_MS;
    this.#trial = null;
  }
}
