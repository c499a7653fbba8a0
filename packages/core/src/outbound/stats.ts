import { requireCapability } from "../storage/capabilities.js";
import * as v from "valibot";
import type { Clock } from "../clock.js";
import type { OutboundConfig } from "../config/resolved.js";
import { type Duration, parseDuration } from "../duration.js";
import type { EndpointState } from "../storage/records.js";
import type { DeliveryCounts, HeldKey } from "../storage/storage.js";
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
  /**
   * Count every row. By default each count stops at `STATS_COUNT_CAP` (`STATS_ENDPOINT_COUNT_CAP` for
   * one endpoint), so the call costs the same beside a backlog of a million deliveries as beside an
   * empty queue, exactly when everyone watches; `capped` then says whether a count stopped. Exact
   * counts read every pending, held, dead-lettered and failed row: for scripts, not for dashboards.
   */
  exact?: boolean | undefined;
}

/**
 * Where `stats()` stops counting, per endpoint and count (see `StatsOptions.exact`): a dashboard that
 * shows "1,000+" due says what an operator needs, and reading a million index entries every 2 s per
 * open tab during an outage does not. Counters kept on every transition would cost a write on every
 * delivery (the hot path), so the cap is the cheaper way to a bounded read.
 */
export const STATS_COUNT_CAP = 1_000;
/** Where `stats({ endpointId })` stops counting: one endpoint's rows alone are read, so more of them. */
export const STATS_ENDPOINT_COUNT_CAP = 10_000;

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
  /** Deliveries that failed permanently (a non-retryable 4xx such as 410, a forbidden address). */
  failed: number;
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
  /** Deliveries that failed permanently (of every endpoint, deleted ones included). */
  failed: number;
  /** Where each count stopped (null with `exact`): a count that reached it means at least that many. */
  countCap: number | null;
  /** Whether a count reached `countCap`: the backlog totals, dead letters and failed are lower bounds. */
  capped: boolean;
  /** Attempts over the window, to every live endpoint. */
  attempts: AttemptTotals;
  /** Every live endpoint, oldest first. */
  endpoints: EndpointStats[];
  /** Ordered delivery (`send({ orderingKey })`); null on a storage without the ordering capability. */
  ordering: {
    /** Deliveries waiting behind an earlier delivery of their ordering key (capped like the rest). */
    waiting: number;
    /**
     * Keys held because their head failed (endpoints with `onKeyFailure: "hold"`), by endpoint then
     * key, at most `HELD_KEYS_IN_STATS`; `orderingKeys.held()` pages through them all.
     */
    heldKeys: HeldKey[];
  } | null;
}

/** How many held keys `stats()` lists (`orderingKeys.held()` pages through all of them). */
export const HELD_KEYS_IN_STATS = 20;

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
  exact: v.optional(v.boolean(), false),
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
  const { window: windowMs, endpointId, exact } = parseOptions(StatsSchema, options, "stats()");
  const at = deps.clock.now();
  const countCap = exact ? null : endpointId === undefined ? STATS_COUNT_CAP : STATS_ENDPOINT_COUNT_CAP;
  const ordering = deps.config.storage.ordering;
  const orderingStats = ordering
    ? Promise.all([
        ordering.countWaiting({ endpointId, cap: countCap ?? Number.MAX_SAFE_INTEGER }),
        ordering.listHeldKeys({ endpointId, limit: HELD_KEYS_IN_STATS, countCap: countCap ?? undefined }),
      ])
    : Promise.resolve(null);
  // Read beside the counts; a failure of either is the call's (no unhandled rejection meanwhile).
  orderingStats.catch(() => {});
  const { totals, unfanned, endpoints } = await requireCapability(
    deps.config.storage,
    "operations",
    "stats()",
  ).stats({
    now: at,
    since: at - windowMs,
    endpointId,
    countCap: countCap ?? undefined,
    // A lease is renewed to `leaseDuration` from now; twice that leaves room for an instance
    // configured with a longer one, which is then counted as scheduled beyond it.
    leasesUntil: at + 2 * deps.config.workers.leaseDurationMs,
  });
  const waitingAndHeld = await orderingStats;
  const reached = (c: DeliveryCounts) =>
    countCap !== null &&
    (c.due >= countCap ||
      c.inFlight + c.scheduled >= countCap ||
      c.held >= countCap ||
      c.deadLetters >= countCap ||
      c.failed >= countCap);
  const attempts = { total: 0, failures: 0 };
  // What the listed endpoints leave of the totals is the deleted endpoints' (summed, capped alike, not
  // listed): when it reaches the cap, one of theirs may have stopped.
  const unlisted: DeliveryCounts = { ...totals };
  for (const endpoint of endpoints) {
    attempts.total += endpoint.attempts;
    attempts.failures += endpoint.failures;
    for (const key of COUNTS) unlisted[key] -= endpoint[key];
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
    failed: totals.failed,
    countCap,
    capped:
      endpoints.some(reached) ||
      reached(unlisted) ||
      (countCap !== null && (unfanned >= countCap || (waitingAndHeld?.[0] ?? 0) >= countCap)),
    attempts: { ...attempts, failureRate: rate(attempts.failures, attempts.total) },
    endpoints: endpoints.map((endpoint) => ({
      ...endpoint,
      failureRate: rate(endpoint.failures, endpoint.attempts),
    })),
    ordering: waitingAndHeld === null ? null : { waiting: waitingAndHeld[0], heldKeys: waitingAndHeld[1] },
  };
}

const COUNTS = ["due", "inFlight", "scheduled", "held", "deadLetters", "failed"] as const;

function rate(failures: number, attempts: number): number | null {
  return attempts === 0 ? null : failures / attempts;
}
