import * as v from "valibot";
import { idFloor } from "../ids.js";
import type { AttemptRecord, EndpointRecord, EndpointState } from "../storage/records.js";
import { HEALTH_BUCKET_MS, type HealthBucket, type OperationsStore } from "../storage/storage.js";
import { parseOptions } from "./page.js";

/** Options of `endpoints.activity`. */
export interface EndpointActivityOptions {
  /** How many of the newest attempts to return in `recent`: 1 to 100, default 20. */
  recent?: number | undefined;
}

/**
 * A moment known exactly, from an attempt (`exact: true`), or only to its health bucket: the attempt
 * started within the `HEALTH_BUCKET_MS` (10 s) that begin at `at` (`exact: false`).
 */
export interface ActivityTime {
  at: number;
  exact: boolean;
}

/** Why an endpoint is failing, or that it is not: what `endpoints.activity(id)` answers. */
export interface EndpointActivity {
  endpointId: string;
  /** Clock time of the answer. */
  at: number;
  state: EndpointState;
  /** The newest attempt: its status code, error and response snippet. Null: none in the lookback. */
  lastAttempt: AttemptRecord | null;
  /** The newest attempt that did not succeed (the last error), among `recent`. */
  lastFailure: AttemptRecord | null;
  /** The newest successful attempt in the lookback; null when there was none. */
  lastSuccess: ActivityTime | null;
  /**
   * When the current run of failures began: the first failed attempt after the last success (the
   * oldest bucket of the lookback when no success is in it). Null when the newest attempt succeeded.
   */
  failingSince: ActivityTime | null;
  /** When the open circuit lets its next probe through; null unless it is open and cooling down. */
  nextProbeAt: number | null;
  /** The circuit is open, its cooldown is over, and the next delivery that comes due is the probe. */
  waitingForTraffic: boolean;
  /** The newest attempts, newest first (at most `recent`). */
  recent: AttemptRecord[];
  /** How far back the health buckets were read (`ACTIVITY_LOOKBACK_MS`). */
  lookbackMs: number;
}

/**
 * How far back `endpoints.activity()` reads an endpoint's health buckets: a day is at most 8,640 of
 * them, read by key. Older than that is history, for `messages.attempts()`.
 */
export const ACTIVITY_LOOKBACK_MS = 86_400_000;
/** The attempts one read of the attempt feed returns at most while looking for the newest. */
const FEED_PAGE = 500;
/** Reads of the feed while looking for where the newest attempts begin. */
const MAX_BISECTIONS = 12;
/** Without health buckets (a storage without `healthBuckets`): the attempts of this last stretch. */
const FALLBACK_WINDOW_MS = 15 * 60_000;

const ActivitySchema = v.strictObject({
  recent: v.optional(
    v.pipe(
      v.number("recent must be a number"),
      v.integer("recent must be a whole number"),
      v.minValue(1, "recent must be at least 1"),
      v.maxValue(100, "recent must be at most 100"),
    ),
    20,
  ),
});

/**
 * The endpoint's activity at `now`: its health buckets of the lookback, and its newest attempts read
 * from the attempt feed starting where the buckets say they are (so a busy endpoint reads seconds of
 * its feed, a quiet one the stretch that holds its last few attempts).
 */
export async function endpointActivity(
  storage: OperationsStore,
  endpoint: EndpointRecord,
  now: number,
  options: EndpointActivityOptions | undefined,
): Promise<EndpointActivity> {
  const { recent: want } = parseOptions(ActivitySchema, options ?? {}, "endpoints.activity()");
  const buckets = storage.healthBuckets
    ? await storage.healthBuckets({ since: now - ACTIVITY_LOOKBACK_MS, endpointId: endpoint.id })
    : [];
  const recent = await newestAttempts(storage, endpoint.id, buckets, want, now);
  const circuitOpen = endpoint.state === "circuit-open";
  const cooling = circuitOpen && endpoint.circuitOpenUntil !== null && endpoint.circuitOpenUntil > now;
  return {
    endpointId: endpoint.id,
    at: now,
    state: endpoint.state,
    lastAttempt: recent[0] ?? null,
    lastFailure: recent.find((a) => a.outcome !== "success") ?? null,
    ...successAndFailure(recent, buckets),
    nextProbeAt: cooling ? endpoint.circuitOpenUntil : null,
    waitingForTraffic: circuitOpen && !cooling,
    recent,
    lookbackMs: ACTIVITY_LOOKBACK_MS,
  };
}

/**
 * The last success and the start of the failures after it, from the newest attempts (`recent`,
 * newest first) where they show it, else from the health buckets (oldest first), which count every
 * attempt of the lookback but know its time only to the bucket.
 */
export function successAndFailure(
  recent: readonly AttemptRecord[],
  buckets: readonly HealthBucket[],
): Pick<EndpointActivity, "lastSuccess" | "failingSince"> {
  const newest = recent[0];
  const successAt = recent.findIndex((a) => a.outcome === "success");
  let lastSuccess: ActivityTime | null =
    successAt >= 0 ? { at: recent[successAt]!.startedAt, exact: true } : null;
  // The bucket of the newest success, when the recent attempts hold none.
  let successBucket = -1;
  if (lastSuccess === null) {
    successBucket = buckets.findLastIndex((b) => b.attempts > b.failures);
    if (successBucket >= 0) lastSuccess = { at: buckets[successBucket]!.start, exact: false };
  }
  if (newest === undefined) {
    // No attempt to look at: failing when the newest bucket holds only failures.
    const last = buckets.at(-1);
    if (last === undefined || last.attempts > last.failures) return { lastSuccess, failingSince: null };
  } else if (newest.outcome === "success") return { lastSuccess, failingSince: null };

  if (successAt > 0)
    return { lastSuccess, failingSince: { at: recent[successAt - 1]!.startedAt, exact: true } };
  // Every recent attempt failed. The failures began in the bucket after the last success's (or in it,
  // when none came later); with no success in the lookback, at least as long ago as its oldest bucket.
  const first = buckets[successBucket + 1] ?? buckets[successBucket];
  const oldestRecent = recent.at(-1);
  if (first === undefined || (oldestRecent !== undefined && oldestRecent.startedAt < first.start)) {
    return { lastSuccess, failingSince: oldestRecent ? { at: oldestRecent.startedAt, exact: false } : null };
  }
  return { lastSuccess, failingSince: { at: first.start, exact: false } };
}

/**
 * The `want` newest attempts of the endpoint, newest first. The buckets say from when the feed holds
 * that many (within a busy bucket, the share of it at its end, as if spread evenly). A page that comes
 * back full means the start was too early, one with fewer than `want` that it was too late: the start
 * is bisected between them. Attempts too close in time to tell apart are followed by id.
 */
async function newestAttempts(
  storage: OperationsStore,
  endpointId: string,
  buckets: readonly HealthBucket[],
  want: number,
  now: number,
): Promise<AttemptRecord[]> {
  if (!storage.attemptsAfter) return [];
  const read = (after: string) => storage.attemptsAfter!({ after, endpointId, limit: FEED_PAGE });
  const newest = (page: AttemptRecord[]) => page.slice(-want).reverse();
  // From `floor` the feed holds at least `want` (or everything there is); from `late`, fewer.
  const floor = buckets.length === 0 ? now - FALLBACK_WINDOW_MS : feedStart(buckets, want, now).bucket;
  let early = floor;
  let late = now + 1;
  let start = buckets.length === 0 ? floor : feedStart(buckets, want, now).estimate;
  for (let reads = 0; reads < MAX_BISECTIONS; reads++) {
    const page = await read(idFloor("att", start));
    if (page.length < FEED_PAGE) {
      if (page.length >= want || start <= floor) return newest(page);
      late = start;
    } else if (late - start < 2) {
      return followById(page, read, want);
    } else early = start;
    start = early + Math.floor((late - early) / 2);
  }
  const page = await read(idFloor("att", early));
  return page.length < FEED_PAGE ? newest(page) : followById(page, read, want);
}

/** From a full page, reads on by id until the feed's end, keeping the newest `want`. */
async function followById(
  page: AttemptRecord[],
  read: (after: string) => Promise<AttemptRecord[]>,
  want: number,
): Promise<AttemptRecord[]> {
  let kept = page.slice(-want);
  let last = page;
  for (let reads = 0; last.length === FEED_PAGE && reads < MAX_BISECTIONS; reads++) {
    last = await read(last.at(-1)!.id);
    kept = kept.concat(last).slice(-want);
  }
  return kept.reverse();
}

/**
 * Where the newest `want` attempts begin, by the buckets (oldest first, at least one): the start of
 * the bucket that holds the oldest of them, and an estimate within it (twice the share the missing
 * attempts take of it, counted back from its end or from `now` for the bucket still filling).
 */
export function feedStart(
  buckets: readonly HealthBucket[],
  want: number,
  now: number,
): { bucket: number; estimate: number } {
  let count = 0;
  for (let i = buckets.length - 1; i >= 0; i--) {
    const bucket = buckets[i]!;
    if (count + bucket.attempts >= want) {
      const end = Math.max(bucket.start, Math.min(bucket.start + HEALTH_BUCKET_MS, now));
      const share = Math.min(1, (2 * (want - count)) / bucket.attempts);
      return { bucket: bucket.start, estimate: end - Math.ceil((end - bucket.start) * share) };
    }
    count += bucket.attempts;
  }
  return { bucket: buckets[0]!.start, estimate: buckets[0]!.start };
}
