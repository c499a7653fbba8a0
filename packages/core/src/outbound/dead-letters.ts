import { requireCapability } from "../storage/capabilities.js";
import * as v from "valibot";
import type { OutboundConfig } from "../config/resolved.js";
import type { DeadLetter } from "../storage/records.js";
import type { FailureStatus } from "../storage/storage.js";
import {
  cursorSchema,
  decodeCursor,
  filterTextSchema,
  limitSchema,
  type Page,
  parseOptions,
  timeSchema,
  toPage,
} from "./page.js";

/** Filters of `deadLetters.list`. Newest first. */
export interface ListDeadLettersOptions {
  /** Only this endpoint's (a deleted endpoint's dead letters stay listed). */
  endpointId?: string | undefined;
  /** Dead-lettered at or after this time. */
  since?: Date | number | undefined;
  /** Dead-lettered before this time. */
  until?: Date | number | undefined;
  /** Page size: 1 to 1000, default 100. */
  limit?: number | undefined;
  /** The `nextCursor` of the previous page; omit for the first page. */
  cursor?: string | undefined;
}

/**
 * `postel.outbound.deadLetters`: deliveries that used up their retries; `postel.outbound.failed`:
 * deliveries that failed permanently. Each item's `status` says which.
 */
export interface DeadLettersApi {
  /**
   * Dead-lettered deliveries (the `dead_letter` view), newest delivery first, one page at a time:
   * pass `nextCursor` back as `cursor` for the next page. Each says what a replay decision needs
   * (event type, tenant, attempts, last error); replay them with `replay({ messageIds })` or
   * `replay({ endpointId, since, status: ["dead-lettered"] })`.
   * @example
   * const { items } = await postel.outbound.deadLetters.list({ endpointId, since: Date.now() - 86_400_000 });
   * for (const dead of items) console.log(dead.type, dead.attemptsMade, dead.lastError);
   */
  list(options?: ListDeadLettersOptions): Promise<Page<DeadLetter>>;
}

const ListDeadLettersSchema = v.strictObject({
  endpointId: v.optional(filterTextSchema),
  since: v.optional(timeSchema),
  until: v.optional(timeSchema),
  limit: limitSchema,
  cursor: cursorSchema,
});

/**
 * Builds `postel.outbound.deadLetters` (retries used up) or, with `"failed"`, `postel.outbound.failed`
 * (permanent failures: a non-retryable 4xx such as 410, a forbidden address). Both list alike and
 * replay alike (`replay({ ..., status: ["failed"] })`); a cursor of one list is refused by the other.
 */
export function createDeadLettersApi(
  config: OutboundConfig,
  status: FailureStatus = "dead-lettered",
): DeadLettersApi {
  const name = status === "failed" ? "failed" : "deadLetters";
  const kind = status === "failed" ? "failed" : "dead-letters";
  return {
    async list(options) {
      const call = `${name}.list()`;
      const { cursor, limit, ...filters } = parseOptions(ListDeadLettersSchema, options, call);
      const after = decodeCursor(cursor, kind, call);
      const ops = requireCapability(config.storage, "operations", call);
      const rows = await ops.listDeadLetters({ ...filters, status, limit: limit + 1, after });
      return toPage(
        rows,
        limit,
        kind,
        (row) => row.deliveryId,
        (row) => row,
      );
    },
  };
}
