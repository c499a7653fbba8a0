import type { Clock, TimerHandle } from "../clock.js";

/** How often the budget is reconsidered (clock ms). */
const ADJUST_EVERY_MS = 100;
/** A step up multiplies the budget by this: 128 → 512 → 1,024 in two steps. */
const STEP = 4;
/** A budget nothing has pressed on for this long steps back down (halves). */
const SHRINK_AFTER_MS = 10_000;

/**
 * The pool's in-flight budget. A number in the options fixes it. By default (`"auto"`) it follows the
 * load between `min` and `max`. The pipeline presses on it when requests wait on the network rather
 * than on this machine: work of endpoints that answer in tens or hundreds of milliseconds was held
 * back for want of room, or such endpoints fill the whole pool while more work waits. Then more in
 * flight means more delivered (100 endpoints answering in 100 ms need ~500 requests in flight to reach
 * 5,000/s, not 128), so every 100 ms under pressure the budget grows fourfold, up to `max` (what
 * memory and sockets allow). Receivers that answer at once gain nothing from more in flight and
 * never press. Ten seconds without pressure halve it again, freeing sockets and memory.
 */
export class ConcurrencyBudget {
  #value: number;
  #pressed = false;
  #pressedAt: number;
  #timer: TimerHandle | null = null;

  constructor(
    private readonly min: number,
    private readonly max: number,
    private readonly clock: Clock,
  ) {
    this.#value = min;
    this.#pressedAt = clock.now();
  }

  /** Requests the pool may have in flight now. */
  get value(): number {
    return this.#value;
  }

  /** Called when a bigger pool would have delivered more (requests wait on the network). */
  press(): void {
    this.#pressed = true;
    this.#pressedAt = this.clock.now();
  }

  /** Starts adjusting (no-op for a fixed budget). */
  start(): void {
    if (this.min === this.max || this.#timer !== null) return;
    this.#timer = this.clock.setTimer(() => this.#adjust(), ADJUST_EVERY_MS);
  }

  stop(): void {
    this.#timer?.cancel();
    this.#timer = null;
  }

  #adjust(): void {
    const now = this.clock.now();
    if (this.#pressed) this.#value = Math.min(this.max, this.#value * STEP);
    else if (now - this.#pressedAt >= SHRINK_AFTER_MS) {
      this.#value = Math.max(this.min, Math.floor(this.#value / 2));
      this.#pressedAt = now;
    }
    this.#pressed = false;
    this.#timer = this.clock.setTimer(() => this.#adjust(), ADJUST_EVERY_MS);
  }
}
