import type { Clock, TimerHandle } from "../clock.js";
import { StorageUnavailableError } from "../errors.js";
import type { StorageLifecycle } from "../storage/storage.js";
import type { Emitter } from "./events.js";

/** How often the workers look for work while wake-ups from other processes are not flowing. */
export const LOST_WAKEUPS_POLL_MS = 100;
// Re-subscribing after a lost LISTEN: the first try at once, then doubling up to a second.
const RESUBSCRIBE_MIN_MS = 100;
const RESUBSCRIBE_MAX_MS = 1_000;

/** What the subscription needs from the rest of Postel. */
export interface WakeupsContext {
  storage: StorageLifecycle & { readonly name: string };
  clock: Clock;
  events: Emitter;
  /** Wakes the workers now (a wake-up, or a look for work that arrived while wake-ups were lost). */
  wake(): void;
  /** Whether the workers must poll at `LOST_WAKEUPS_POLL_MS` (true while wake-ups are not flowing). */
  pollFast(fast: boolean): void;
}

/**
 * The storage's wake-up subscription (Postgres LISTEN), kept alive: when it is lost (a failover, a
 * cut connection, a reconnect that landed on a standby), the workers poll every 100 ms and the
 * subscription is made again, a try a second at most, until the storage says it took effect. The
 * loss is reported once as an `error` event (context `"listening for wake-ups"`), not once per try.
 */
export class Wakeups {
  #unsubscribe: (() => Promise<void>) | null = null;
  #retry: TimerHandle | null = null;
  #retryMs = RESUBSCRIBE_MIN_MS;
  #active = false;
  /** Counts subscriptions, so a late `onLost` of an old one is ignored. */
  #generation = 0;

  constructor(private readonly ctx: WakeupsContext) {}

  /** Subscribes; fails as the storage's `subscribe` does (e.g. the database is unreachable at start). */
  async start(): Promise<void> {
    if (this.#active || !this.ctx.storage.subscribe) return;
    this.#active = true;
    try {
      await this.#subscribe();
    } catch (error) {
      this.#active = false;
      throw error;
    }
  }

  /** Unsubscribes and stops re-subscribing. */
  async stop(): Promise<void> {
    this.#active = false;
    this.#generation++;
    this.#retry?.cancel();
    this.#retry = null;
    this.ctx.pollFast(false);
    const unsubscribe = this.#unsubscribe;
    this.#unsubscribe = null;
    await unsubscribe?.();
  }

  async #subscribe(): Promise<void> {
    const generation = ++this.#generation;
    const unsubscribe = await this.ctx.storage.subscribe!(
      () => this.ctx.wake(),
      (error) => {
        if (generation === this.#generation && this.#active) this.#lost(error);
      },
    );
    if (!this.#active || generation !== this.#generation) {
      await unsubscribe();
      return;
    }
    this.#unsubscribe = unsubscribe;
  }

  #lost(error: unknown): void {
    this.#generation++;
    this.#unsubscribe = null;
    this.ctx.pollFast(true);
    this.ctx.events.emit("error", {
      error: new StorageUnavailableError(
        `Wake-ups from other processes stopped (${reason(error)}): the workers look for new work every ` +
          `${LOST_WAKEUPS_POLL_MS} ms until the ${this.ctx.storage.name} storage listens again.`,
        { cause: error },
      ),
      context: "listening for wake-ups",
    });
    this.#retryMs = RESUBSCRIBE_MIN_MS;
    this.#schedule(0);
  }

  #schedule(ms: number): void {
    this.#retry = this.ctx.clock.setTimer(() => {
      this.#retry = null;
      if (!this.#active) return;
      this.#subscribe().then(
        () => {
          if (!this.#active) return;
          this.ctx.pollFast(false);
          // Whatever was notified while nobody listened is due now.
          this.ctx.wake();
        },
        () => {
          this.#retryMs = Math.min(RESUBSCRIBE_MAX_MS, this.#retryMs * 2);
          if (this.#active) this.#schedule(this.#retryMs);
        },
      );
    }, ms);
  }
}

function reason(error: unknown): string {
  return error instanceof Error && error.message !== "" ? error.message : "the listening connection was lost";
}
