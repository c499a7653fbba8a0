import { type Duration, toMs } from "./duration.js";

/** A scheduled callback that can be cancelled before it fires. */
export interface TimerHandle {
  cancel(): void;
}

/** The source of time for everything in core: inject `ManualClock` in tests to move time by hand. */
export interface Clock {
  /** Current time in epoch milliseconds. */
  now(): number;
  /** Calls `fn` once after `ms` milliseconds of this clock's time. */
  setTimer(fn: () => void, ms: number): TimerHandle;
}

// setTimeout fires at once (with a warning) beyond 2^31-1 ms, so longer waits are chained.
const MAX_TIMEOUT_MS = 2_147_483_647;

/** Real time: `Date.now()` and `setTimeout`. Timers stay ref'd; callers decide whether they keep the process alive. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    // Counts down in chunks rather than against Date.now(), so a wall-clock jump cannot stretch a timer.
    let remaining = Number.isFinite(ms) ? Math.max(0, ms) : 0;
    let timer: ReturnType<typeof setTimeout>;
    const arm = () => {
      const chunk = Math.min(remaining, MAX_TIMEOUT_MS);
      remaining -= chunk;
      timer = setTimeout(() => (remaining > 0 ? arm() : fn()), chunk);
    };
    arm();
    return { cancel: () => clearTimeout(timer) };
  },
};

/** Waits `ms` on `clock`; resolves early (never rejects) when `signal` aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const onAbort = () => {
      timer.cancel();
      resolve();
    };
    const timer = clock.setTimer(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

interface ManualTimer {
  readonly due: number;
  readonly seq: number;
  readonly fn: () => void;
}

/**
 * A clock that only moves when told to, for deterministic tests of time-dependent behaviour.
 * @example
 * const clock = new ManualClock();
 * const postel = Postel({ clock, outbound: { storage: InMemoryStorage() } });
 * await clock.advanceAsync("5s"); // fires the first retry
 */
export class ManualClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Map<number, ManualTimer>();

  constructor(start: number | Date = Date.UTC(2026, 0, 1)) {
    this.#now = toEpoch(start);
  }

  /** Current time in epoch milliseconds. */
  now(): number {
    return this.#now;
  }

  /** Schedules `fn` at `now() + ms`; it fires during a later `advance` that reaches that time. */
  setTimer(fn: () => void, ms: number): TimerHandle {
    const seq = this.#seq++;
    const wait = Number.isFinite(ms) ? Math.max(0, ms) : 0;
    this.#timers.set(seq, { due: this.#now + wait, seq, fn });
    return { cancel: () => this.#timers.delete(seq) };
  }

  /** Jumps to `time` without firing timers; timers already due fire on the next `advance(0)`. */
  set(time: number | Date): void {
    this.#now = toEpoch(time);
  }

  /** Moves time forward by `ms`, firing every timer due on the way in due-time order, at its due time. */
  advance(ms: Duration): void {
    const target = this.#now + toMs(ms, "ManualClock.advance(ms)");
    for (let timer = this.#nextDue(target); timer; timer = this.#nextDue(target)) {
      this.#fire(timer);
    }
    this.#now = Math.max(this.#now, target);
  }

  /** Like `advance`, but yields a macrotask turn before and after each timer so async work it starts can run. */
  async advanceAsync(ms: Duration): Promise<void> {
    const target = this.#now + toMs(ms, "ManualClock.advanceAsync(ms)");
    await macrotask();
    for (let timer = this.#nextDue(target); timer; timer = this.#nextDue(target)) {
      this.#fire(timer);
      await macrotask();
    }
    this.#now = Math.max(this.#now, target);
  }

  /** How many timers are scheduled and not yet fired or cancelled. */
  pendingTimers(): number {
    return this.#timers.size;
  }

  #nextDue(target: number): ManualTimer | undefined {
    let next: ManualTimer | undefined;
    for (const timer of this.#timers.values()) {
      if (timer.due > target) continue;
      if (!next || timer.due < next.due || (timer.due === next.due && timer.seq < next.seq)) next = timer;
    }
    return next;
  }

  #fire(timer: ManualTimer): void {
    this.#timers.delete(timer.seq);
    this.#now = Math.max(this.#now, timer.due);
    timer.fn();
  }
}

function toEpoch(time: number | Date): number {
  return typeof time === "number" ? time : time.getTime();
}

function macrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
