import { requireCapability } from "../storage/capabilities.js";
import * as v from "valibot";
import type { OutboundConfig } from "../config/resolved.js";
import { PostelError } from "../errors.js";
import { idFloor } from "../ids.js";
import type { AttemptOutcome, AttemptRecord } from "../storage/records.js";
import { filterTextSchema, limitSchema, parseOptions, timeSchema } from "./page.js";

/** Options of `attempts.after`: where to start, and which attempts. */
export interface AttemptFeedOptions {
  /** The id of the last attempt already read (exclusive). */
  after?: string | undefined;
  /** Without `after`: start with the attempts recorded at or after this time. Default: now. */
  since?: Date | number | undefined;
  /** At most this many: 1 to 1000, default 100. */
  limit?: number | undefined;
  /** Only this endpoint's attempts. */
  endpointId?: string | undefined;
  /** Only attempts with this outcome. */
  outcome?: AttemptOutcome | undefined;
  /** Only attempts of messages of this event type. */
  type?: string | undefined;
}

/** Options of `attempts.recent`. */
export interface RecentAttemptsOptions {
  /** Attempts that started at or after this time. */
  since: Date | number;
  /** At most this many: 1 to 1000, default 100. */
  limit?: number | undefined;
}

/** `postel.outbound.attempts`: HTTP attempts across every message, as they happen. */
export interface AttemptsApi {
  /**
   * Attempts that started at or after `since`, oldest first (by start time, then id), at most `limit`:
   * every instance's, since they are read from storage. To follow them live (`postel tail`), poll
   * with `since` a little before the newest start seen (an attempt is stored when its response
   * arrives, up to the HTTP timeout after it started) and skip ids already seen. Costs what the
   * attempts since `since` and the live work cost, not the history: keep `since` recent.
   * On Postgres, an attempt a worker made after its own lease had expired (a process stalled past
   * `leaseDuration`) can be missing here; it is always in `messages.attempts(id)`.
   * @example
   * const seen = new Set<string>();
   * let since = Date.now() - 60_000;
   * for (const attempt of await postel.outbound.attempts.recent({ since })) {
   *   if (seen.has(attempt.id)) continue;
   *   seen.add(attempt.id);
   *   console.log(attempt.endpointId, attempt.statusCode ?? attempt.errorCode, attempt.latencyMs);
   *   since = Math.max(since, attempt.startedAt - 30_000);
   * }
   */
  recent(options: RecentAttemptsOptions): Promise<AttemptRecord[]>;
  /**
   * Attempts with ids above `after` (or recorded since `since`), lowest id first, the filters applied
   * before the limit: a feed that keeps up with any rate, page after page. An attempt's id is made
   * when its response arrives and it shows up here once its outcome commits, a moment later: to see
   * every one, ask again from a little before the last id read and skip ids already seen (as
   * `postel tail` does). Needs `Storage.attemptsAfter` (`ATTEMPT_FEED_UNSUPPORTED` without it).
   * @example
   * let after: string | undefined;
   * for (;;) {
   *   const page = await postel.outbound.attempts.after({ after, since: Date.now(), endpointId, limit: 1000 });
   *   for (const attempt of page) console.log(attempt.statusCode ?? attempt.errorCode);
   *   after = page.at(-1)?.id ?? after;
   *   if (page.length < 1000) await new Promise((resolve) => setTimeout(resolve, 1000));
   * }
   */
  after(options?: AttemptFeedOptions): Promise<AttemptRecord[]>;
}

const AttemptFeedSchema = v.strictObject({
  after: v.optional(v.pipe(filterTextSchema, v.startsWith("att_", "must be an attempt id (att_…)"))),
  since: v.optional(timeSchema),
  limit: limitSchema,
  endpointId: v.optional(filterTextSchema),
  outcome: v.optional(
    v.picklist(["success", "retryable", "permanent"], 'must be "success", "retryable" or "permanent"'),
  ),
  type: v.optional(filterTextSchema),
});

const RecentAttemptsSchema = v.strictObject({
  since: timeSchema,
  limit: limitSchema,
});

/** Builds `postel.outbound.attempts`. */
export function createAttemptsApi(config: OutboundConfig, now: () => number): AttemptsApi {
  return {
    async after(options) {
      const { after, since, ...filters } = parseOptions(AttemptFeedSchema, options ?? {}, "attempts.after()");
      const ops = requireCapability(config.storage, "operations", "attempts.after()");
      if (!ops.attemptsAfter) {
        throw new PostelError(
          "ATTEMPT_FEED_UNSUPPORTED",
          `The ${config.storage.name} storage has no attempt feed (OperationsStore.attemptsAfter), which attempts.after() and ` +
            "`postel tail` need to keep up. InMemoryStorage, PostgresStorage and SqliteStorage have one; " +
            "a storage of your own can implement it (runStorageConformance checks it), or read attempts.recent().",
        );
      }
      return ops.attemptsAfter({ ...filters, after: after ?? idFloor("att", since ?? now()) });
    },
    async recent(options) {
      const { since, limit } = parseOptions(RecentAttemptsSchema, options, "attempts.recent()");
      return requireCapability(config.storage, "operations", "attempts.recent()").recentAttempts({
        since,
        limit,
      });
    },
  };
}
