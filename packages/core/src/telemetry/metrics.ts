import type { Counter, Histogram, Meter, ObservableCounter } from "@opentelemetry/api";
import type { EndpointState } from "../storage/records.js";

/**
 * Bucket bounds (seconds) of `postel.delivery.attempt.duration`: one HTTP request, from 5 ms to the
 * longest timeout worth allowing.
 */
export const ATTEMPT_DURATION_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 15, 30, 60,
];

/**
 * Bucket bounds (seconds) of `postel.delivery.duration`, created → delivered: 5 ms (delivered at
 * once) to 10 days (the retry schedule's tail: 5s 5m 30m 2h 5h 10h 1d 2d 3d).
 */
export const DELIVERY_DURATION_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 1800, 3600, 7200, 18_000, 36_000,
  86_400, 172_800, 259_200, 432_000, 864_000,
];

/** Every endpoint state, so each endpoint reports 1 for its state and 0 for the others. */
export const ENDPOINT_STATES: readonly EndpointState[] = ["active", "circuit-open", "disabled"];

/** The instruments Postel records on (see the Telemetry section of the README for each one). */
export interface Instruments {
  /** Observed from counts kept in the process (see `AttemptCounts`), not added to per attempt. */
  attempts: ObservableCounter;
  attemptDuration: Histogram;
  deliveryDuration: Histogram;
  deadLetters: Counter;
}

/** Creates the synchronous instruments; the observable gauges are registered by `observeBacklog`. */
export function createInstruments(meter: Meter): Instruments {
  return {
    attempts: meter.createObservableCounter("postel.delivery.attempts", {
      description: "HTTP delivery attempts, by outcome and status class.",
      unit: "{attempt}",
    }),
    attemptDuration: meter.createHistogram("postel.delivery.attempt.duration", {
      description:
        "Duration of one HTTP delivery attempt, until the response (or the error); postel.delivery.attempts has them by outcome.",
      unit: "s",
      advice: { explicitBucketBoundaries: ATTEMPT_DURATION_BUCKETS },
    }),
    deliveryDuration: meter.createHistogram("postel.delivery.duration", {
      description:
        "End-to-end latency of delivered webhooks: from send() to the successful attempt's response.",
      unit: "s",
      advice: { explicitBucketBoundaries: DELIVERY_DURATION_BUCKETS },
    }),
    deadLetters: meter.createCounter("postel.delivery.dead_letters", {
      description: "Deliveries that failed for good: retries exhausted, or a permanent error.",
      unit: "{delivery}",
    }),
  };
}

/** The status class of an attempt (`2xx` … `5xx`), or `none` when no response arrived. */
export function statusClass(statusCode: number | null): string {
  if (statusCode === null) return "none";
  return STATUS_CLASSES[Math.floor(statusCode / 100)] ?? "none";
}

const STATUS_CLASSES = ["none", "1xx", "2xx", "3xx", "4xx", "5xx"];

/**
 * Attempts by outcome, status class and error type, counted in the process and observed by
 * `postel.delivery.attempts` at each collection. Adding to an SDK counter per attempt cost a hash of
 * its attributes every time (about a tenth of telemetry's cost per delivery in the drain); a
 * handful of keys counted here cost a map lookup.
 */
export class AttemptCounts {
  readonly #counts = new Map<string, { attributes: Record<string, string>; count: number }>();

  /** Counts one attempt. */
  add(outcome: string, statusCode: number | null, errorCode: string | null): void {
    const status = statusClass(statusCode);
    const key = `${outcome} ${status} ${errorCode ?? ""}`;
    const entry = this.#counts.get(key);
    if (entry !== undefined) {
      entry.count++;
      return;
    }
    const attributes: Record<string, string> = {
      "postel.attempt.outcome": outcome,
      "postel.http.status_class": status,
    };
    if (errorCode !== null) attributes["error.type"] = errorCode;
    this.#counts.set(key, { attributes, count: 1 });
  }

  /** Every attribute set seen so far, with its cumulative count. */
  entries(): Iterable<{ attributes: Record<string, string>; count: number }> {
    return this.#counts.values();
  }
}
