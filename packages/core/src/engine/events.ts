import type { PruneResult } from "../outbound/prune.js";
import type { AttemptRecord } from "../storage/records.js";

/** The events `postel.on()` emits, and what each listener receives. */
export interface PostelEventMap {
  /** Every HTTP attempt, after it was recorded. */
  attempt: AttemptRecord;
  /** A delivery succeeded. */
  delivered: { messageId: string; deliveryId: string; endpointId: string; attempt: AttemptRecord };
  /** A delivery failed retryably and will be retried (`retry` is 1-based). */
  "retry-scheduled": {
    messageId: string;
    deliveryId: string;
    endpointId: string;
    retry: number;
    nextAttemptAt: number;
    reason: string;
  };
  /** A delivery failed for good: retries exhausted (`dead-lettered`) or a permanent error (`failed`). */
  "dead-letter": {
    messageId: string;
    deliveryId: string;
    endpointId: string;
    status: "dead-lettered" | "failed";
    reason: string;
  };
  /** An endpoint's circuit opened; deliveries to it wait until `until`. */
  "circuit-open": { endpointId: string; until: number; failureRate: number };
  /** A probe succeeded and the endpoint's circuit closed. */
  "circuit-close": { endpointId: string };
  /** Auto-disable took an endpoint out of rotation. */
  "endpoint-disabled": { endpointId: string; reason: string };
  /**
   * The workers' retention finished a pass (`outbound.retention`): what it deleted, finished before
   * `finishedBefore`.
   */
  pruned: PruneResult & { finishedBefore: number };
  /** A worker hit an error it will recover from (e.g. the database is restarting). */
  error: { error: unknown; context: string };
}

/** Event names of `postel.on()`. */
export type PostelEventName = keyof PostelEventMap;

/** A tiny typed emitter; a throwing listener never breaks delivery. */
export class Emitter {
  readonly #listeners = new Map<PostelEventName, Set<(payload: never) => void>>();

  on<E extends PostelEventName>(event: E, listener: (payload: PostelEventMap[E]) => void): () => void {
    let set = this.#listeners.get(event);
    if (!set) {
      set = new Set();
      this.#listeners.set(event, set);
    }
    set.add(listener as (payload: never) => void);
    return () => set.delete(listener as (payload: never) => void);
  }

  emit<E extends PostelEventName>(event: E, payload: PostelEventMap[E]): void {
    const set = this.#listeners.get(event);
    if (!set) return;
    for (const listener of set) {
      try {
        (listener as (payload: PostelEventMap[E]) => void)(payload);
      } catch (error) {
        if (event !== "error") this.emit("error", { error, context: `listener of "${event}"` });
      }
    }
  }

  has(event: PostelEventName): boolean {
    return (this.#listeners.get(event)?.size ?? 0) > 0;
  }
}
