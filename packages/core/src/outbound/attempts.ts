import * as v from "valibot";
import type { OutboundConfig } from "../config.js";
import type { AttemptRecord } from "../storage/records.js";
import { limitSchema, parseOptions, timeSchema } from "./page.js";

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
}

const RecentAttemptsSchema = v.strictObject({
  since: timeSchema,
  limit: limitSchema,
});

/** Builds `postel.outbound.attempts`. */
export function createAttemptsApi(config: OutboundConfig): AttemptsApi {
  return {
    async recent(options) {
      const { since, limit } = parseOptions(RecentAttemptsSchema, options, "attempts.recent()");
      return config.storage.recentAttempts({ since, limit });
    },
  };
}
