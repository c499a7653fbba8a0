import { requireCapability } from "../storage/capabilities.js";
import * as v from "valibot";
import type { OutboundConfig } from "../config/resolved.js";
import { type Duration, parseDuration } from "../duration.js";
import { PostelError } from "../errors.js";
import { HEALTH_BUCKET_MS, type HealthBucket } from "../storage/storage.js";
import { filterTextSchema, parseOptions } from "./page.js";

/** Options of `timeline`. */
export interface TimelineOptions {
  /** How far back: default `"15m"`, at most `"1d"`. */
  window?: Duration | undefined;
  /** Only this endpoint's attempts (deleted or not). */
  endpointId?: string | undefined;
}

/** Attempts and failures per health bucket over a window: what the live view draws. */
export interface Timeline {
  /** Clock time of the answer. */
  at: number;
  /** The width of every point (`HEALTH_BUCKET_MS`). */
  bucketMs: number;
  /** One point per bucket of the window, oldest first, empty buckets included; the last one is still filling. */
  points: HealthBucket[];
}

/** The longest `timeline` window: 8,640 points. */
const MAX_WINDOW_MS = 86_400_000;

const TimelineSchema = v.strictObject({
  window: v.optional(
    v.pipe(
      v.custom<Duration>((x) => {
        const ms = parseDuration(x as Duration) ?? 0;
        return ms > 0 && ms <= MAX_WINDOW_MS;
      }, 'window must be a positive duration of at most a day, like "15m" or "1h"'),
      v.transform((x) => parseDuration(x)!),
    ),
    "15m",
  ),
  endpointId: v.optional(filterTextSchema),
});

/**
 * Attempts and failures of every endpoint (or one) per 10 s over `window`, from the health buckets
 * the workers keep as they record outcomes: exact at any rate, and it costs the buckets of the window
 * whatever the traffic. Needs `Storage.healthBuckets` (`HEALTH_TIMELINE_UNSUPPORTED` without it).
 * Bad options throw `InvalidInputError` (`INVALID_ARGUMENT`).
 */
export async function timeline(
  config: OutboundConfig,
  now: number,
  options: TimelineOptions | undefined,
): Promise<Timeline> {
  const { window, endpointId } = parseOptions(TimelineSchema, options ?? {}, "timeline()");
  const storage = requireCapability(config.storage, "operations", "timeline()");
  if (!storage.healthBuckets) {
    throw new PostelError(
      "HEALTH_TIMELINE_UNSUPPORTED",
      `The ${config.storage.name} storage cannot read health buckets (OperationsStore.healthBuckets), which timeline() ` +
        "needs. InMemoryStorage, PostgresStorage and SqliteStorage can; a storage of your own can implement " +
        "it (runStorageConformance checks it), or read the sums of stats({ window }).",
    );
  }
  const last = Math.floor(now / HEALTH_BUCKET_MS) * HEALTH_BUCKET_MS;
  const first = last - (Math.ceil(window / HEALTH_BUCKET_MS) - 1) * HEALTH_BUCKET_MS;
  const found = new Map(
    (await storage.healthBuckets({ since: first, endpointId })).map((bucket) => [bucket.start, bucket]),
  );
  const points: HealthBucket[] = [];
  for (let start = first; start <= last; start += HEALTH_BUCKET_MS) {
    const bucket = found.get(start);
    points.push({ start, attempts: bucket?.attempts ?? 0, failures: bucket?.failures ?? 0 });
  }
  return { at: now, bucketMs: HEALTH_BUCKET_MS, points };
}
