import * as v from "valibot";
import type { Clock } from "../clock.js";
import type { OutboundConfig } from "../config.js";
import { type Duration, parseDuration } from "../duration.js";
import type { EndpointState } from "../storage/records.js";
import { filterTextSchema, parseOptions } from "./page.js";

/** Options of `stats`. */
export interface StatsOptions {
  /** How far back attempts and failures are counted. Default `"1h"`. */
  window?: Duration | undefined;
  /**
   * Only this endpoint: `endpoints` holds its line alone (none once it is deleted), and the backlog,
   * dead letters and attempts are its own (`backlog.unfanned` stays the outbox's: those messages have
   * no endpoint yet). Reads only its rows, so a page about one endpoint stays cheap beside many.
   */
  endpointId?: string | undefined;
}

/** Attempts over a window and the share of them that failed (null when there was none). */
export interface AttemptTotals {
  total: number;
  failures: number;
  failureRate: number | null;
}

/** One live endpoint in `OutboundStats`: its state, its work by state, its attempts over the window. */
export interface EndpointStats {
  id: string;
  url: string;
  description: string | null;
  state: EndpointState;
  circuitOpenUntil: number | null;
  due: number;
  inFlight: number;
  scheduled: number;
  held: number;
  deadLetters: number;
  attempts: number;
  failures: number;
  failureRate: number | null;
}

/** A snapshot of the outbound queue for dashboards and health checks (see `stats`). */
export interface OutboundStats {
  /** Clock time of the snapshot. */
  at: number;
  windowMs: number;
  backlog: {
    /** Pending deliveries due now and not leased (an expired lease is due). */
    due: number;
    /** When the oldest due delivery became due (its `nextAttemptAt`); null when none is due. */
    oldestDueAt: number | null;
    /** Pending deliveries under a live lease: being delivered now. */
    inFlight: number;
    /** Pending deliveries due later: retries and circuit-open deferrals waiting. */
    scheduled: number;
    /** Deliveries held because their endpoint is disabled. */
    held: number;
    /** Messages not fanned out to their endpoints yet. */
    unfanned: number;
  };
  /** Deliveries currently dead-lettered (of every endpoint, deleted ones included). */
  deadLetters: number;
  /** Attempts over the window, to every live endpoint. */
  attempts: AttemptTotals;
  /** Every live endpoint, oldest first. */
  endpoints: EndpointStats[];
}

const StatsSchema = v.strictObject({
  window: v.optional(
    v.pipe(
      v.custom<Duration>(
        (x) => (parseDuration(x as Duration) ?? 0) > 0,
        'window must be a positive duration like "15m", "1h", "1d" or milliseconds',
      ),
      v.transform((x) => parseDuration(x)!),
    ),
    "1h",
  ),
  endpointId: v.optional(filterTextSchema),
});

/**
 * The queue at `clock.now()`: backlog by state, dead letters, and per endpoint the same counts with
 * its attempts and failure rate over `window` (health buckets of 10 s that start within it). Reads
 * only live work, dead letters and health buckets, so it stays cheap beside millions of rows of
 * history. Bad options throw `InvalidInputError` (`INVALID_ARGUMENT`).
 */
export async function stats(
  deps: { config: OutboundConfig; clock: Clock },
  options?: StatsOptions,
): Promise<OutboundStats> {
  const { window: windowMs, endpointId } = parseOptions(StatsSchema, options, "stats()");
  const at = deps.clock.now();
  const { totals, unfanned, endpoints } = await deps.config.storage.stats({
    now: at,
    since: at - windowMs,
    endpointId,
  });
  const attempts = { total: 0, failures: 0 };
  for (const endpoint of endpoints) {
    attempts.total += endpoint.attempts;
    attempts.failures += endpoint.failures;
  }
  return {
    at,
    windowMs,
    backlog: {
      due: totals.due,
      oldestDueAt: totals.oldestDueAt,
      inFlight: totals.inFlight,
      scheduled: totals.scheduled,
      held: totals.held,
      unfanned,
    },
    deadLetters: totals.deadLetters,
    attempts: { ...attempts, failureRate: rate(attempts.failures, attempts.total) },
    endpoints: endpoints.map((endpoint) => ({
      ...endpoint,
      failureRate: rate(endpoint.failures, endpoint.attempts),
    })),
  };
}

function rate(failures: number, attempts: number): number | null {
  return attempts === 0 ? null : failures / attempts;
}
