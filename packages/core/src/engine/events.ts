import type { PruneResult } from "../outbound/prune.js";
import type { AttemptRecord, ClaimedDelivery, EndpointRecord } from "../storage/records.js";
import type { DeliveryOutcome } from "../storage/storage.js";

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

/** Called once an attempt's response is in and its transition decided. */
export type AttemptEnd = (attempt: AttemptRecord, outcome: DeliveryOutcome) => void;

/** A delivery whose outcome storage accepted. */
export interface RecordedOutcome {
  claimed: ClaimedDelivery;
  outcome: DeliveryOutcome;
}

/**
 * Internal hooks around every HTTP attempt, for what watches delivery from inside the engine
 * (telemetry registers one when it is on). Unlike a `postel.on()` listener, an observer may add
 * request headers, and it is our own code: it must not throw.
 */
export interface AttemptObserver {
  /**
   * The request is signed and about to be sent. `headers` are its flat `[name, value, ...]` pairs:
   * append to them to add headers (e.g. `traceparent`); the signature does not cover them.
   */
  start(claimed: ClaimedDelivery, endpoint: EndpointRecord, headers: string[], probe: boolean): AttemptEnd;
  /** Storage accepted these outcomes (a lost lease records nothing). */
  recorded(outcomes: readonly RecordedOutcome[]): void;
}

/**
 * A tiny typed emitter of what the engine does: events to `postel.on()` listeners (a throwing
 * listener never breaks delivery) and attempts to internal observers.
 */
export class Emitter {
  readonly #listeners = new Map<PostelEventName, Set<(payload: never) => void>>();
  readonly #observers: AttemptObserver[] = [];

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

  /** Adds an internal observer of every attempt. */
  observe(observer: AttemptObserver): void {
    this.#observers.push(observer);
  }

  /**
   * Tells the observers an attempt is about to be sent; returns what to call when it is decided, or
   * null when nothing observes (delivery then pays one length check and allocates nothing).
   */
  startAttempt(
    claimed: ClaimedDelivery,
    endpoint: EndpointRecord,
    headers: string[],
    probe: boolean,
  ): AttemptEnd | null {
    const observers = this.#observers;
    if (observers.length === 0) return null;
    if (observers.length === 1) return observers[0]!.start(claimed, endpoint, headers, probe);
    const ends = observers.map((observer) => observer.start(claimed, endpoint, headers, probe));
    return (attempt, outcome) => {
      for (const end of ends) end(attempt, outcome);
    };
  }

  /** Tells the observers which outcomes storage accepted. */
  recorded(outcomes: readonly RecordedOutcome[]): void {
    for (const observer of this.#observers) observer.recorded(outcomes);
  }
}
