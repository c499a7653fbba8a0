import { requireCapability } from "../storage/capabilities.js";
import * as v from "valibot";
import type { OutboundConfig } from "../config/resolved.js";
import { NotFoundError } from "../errors.js";
import { messageIdBound } from "../ids.js";
import type { AttemptRecord, DeliveryRecord, MessageRecord, MessageStatus } from "../storage/records.js";
import { isLookupId } from "./lookup-id.js";
import {
  cursorSchema,
  decodeCursor,
  encodeCursor,
  filterTextSchema,
  limitSchema,
  type Page,
  parseOptions,
  timeSchema,
  toPage,
} from "./page.js";
import { quote } from "./quote.js";
import type { Message } from "./types.js";

/** Filters of `messages.list`. Newest first. */
export interface ListMessagesOptions {
  status?: MessageStatus | undefined;
  type?: string | undefined;
  tenantId?: string | undefined;
  /** Messages created at or after this time. */
  since?: Date | number | undefined;
  /** Messages created before this time. */
  until?: Date | number | undefined;
  /** Page size: 1 to 1000, default 100. */
  limit?: number | undefined;
  /** The `nextCursor` of the previous page; omit for the first page. */
  cursor?: string | undefined;
}

const ListMessagesSchema = v.strictObject({
  status: v.optional(
    v.picklist(
      ["pending", "dispatched", "dead-lettered", "expired"],
      'status must be "pending", "dispatched", "dead-lettered" or "expired"',
    ),
  ),
  type: v.optional(filterTextSchema),
  tenantId: v.optional(filterTextSchema),
  since: v.optional(timeSchema),
  until: v.optional(timeSchema),
  limit: limitSchema,
  cursor: cursorSchema,
});

/** `postel.outbound.messages`: the outbox and its audit trail. */
export interface MessagesApi {
  /** The message, or null. */
  get(id: string): Promise<Message | null>;
  /**
   * Messages, newest first, one page at a time: pass `nextCursor` back as `cursor` for the next page.
   * Paging is keyset on the id, so messages sent meanwhile never shift the pages (none is skipped or
   * repeated). Filtered by `type` or `tenantId`, a page examines at most 10,000 messages
   * (`SEARCH_WINDOW`), so a value few messages carry never walks the whole history for one page: such
   * a page can hold fewer than `limit` messages, even none, and still have a `nextCursor` that goes on
   * searching older ones. Only a null `nextCursor` means the end. Filtered by `tenantId` alone (a
   * status besides) on Postgres, SQLite or in memory, pages are full: the tenant's own index is
   * walked, whatever the rest of the history holds. Bad options throw
   * `InvalidInputError` (`INVALID_ARGUMENT`, or `INVALID_CURSOR`).
   * @example
   * let cursor: string | undefined;
   * do {
   *   const page = await postel.outbound.messages.list({ status: "dead-lettered", cursor });
   *   for (const message of page.items) console.log(message.id, message.type);
   *   cursor = page.nextCursor ?? undefined;
   * } while (cursor);
   */
  list(options?: ListMessagesOptions): Promise<Page<Message>>;
  /** Every delivery (one per endpoint it fanned out to) with its retry state. */
  deliveries(id: string): Promise<DeliveryRecord[]>;
  /** The full audit trail: every attempt of every delivery, with status, latency, error and response snippet. */
  attempts(id: string): Promise<AttemptRecord[]>;
}

/** Turns a stored message into the API shape (`data` parsed). */
export function toMessage(record: MessageRecord): Message {
  const { payload, ...rest } = record;
  return { ...rest, data: JSON.parse(payload) };
}

/** Builds `postel.outbound.messages`. */
export function createMessagesApi(config: OutboundConfig): MessagesApi {
  const { storage } = config;
  async function mustExist(id: string): Promise<void> {
    if (!isLookupId(id) || !(await storage.getMessage(id))) {
      throw new NotFoundError(
        "MESSAGE_NOT_FOUND",
        `No message with id ${quote(id)}; send() returns the id to use.`,
      );
    }
  }
  return {
    async get(id) {
      const record = isLookupId(id) ? await storage.getMessage(id) : null;
      return record ? toMessage(record) : null;
    },
    async list(options) {
      const { cursor, limit, ...filters } = parseOptions(ListMessagesSchema, options, "messages.list()");
      const cursorKey = decodeCursor(cursor, "messages", "messages.list()");
      const after = startBelow(cursorKey, filters.until);
      const floor = stopAt(filters.since);
      const ops = requireCapability(storage, "operations", "messages.list()");
      if (!searches(filters, ops.indexedMessageFilters) || ops.messageWindow === undefined) {
        const rows = await ops.listMessages({ ...filters, limit: limit + 1, after, from: floor });
        return toPage(rows, limit, "messages", (row) => row.id, toMessage);
      }
      // A type or tenant that few messages carry would walk the whole history for one page: each
      // page examines one window of SEARCH_WINDOW messages and, when that fills no page, says where
      // to go on (a short page with a cursor) instead.
      const from = await ops.messageWindow(after, SEARCH_WINDOW);
      const rows = await ops.listMessages({
        ...filters,
        limit: limit + 1,
        after,
        from: higherId(from ?? undefined, floor),
      });
      if (rows.length > limit || from === null)
        return toPage(rows, limit, "messages", (row) => row.id, toMessage);
      const reachedSince = floor !== undefined && from < floor;
      return { items: rows.map(toMessage), nextCursor: reachedSince ? null : encodeCursor("messages", from) };
    },
    async deliveries(id) {
      await mustExist(id);
      return storage.listDeliveries(id);
    },
    async attempts(id) {
      const ops = requireCapability(storage, "operations", "messages.attempts()");
      await mustExist(id);
      return ops.listAttempts(id);
    },
  };
}

/**
 * Messages one page of a listing filtered by type or tenant examines at most (newest first from its
 * cursor): about 10 ms of a primary-key walk on PostgreSQL, whatever the history holds.
 */
export const SEARCH_WINDOW = 10_000;

/** A filter the storages have no index for: a rare value would make a page walk the whole history. */
/**
 * Whether a listing must be searched window by window: it filters by a type or tenant that few
 * messages may carry, and no index of the storage holds just those (a rare status, or a tenant on a
 * storage with a tenant index, is walked in its own index).
 */
function searches(
  filters: { type?: string | undefined; tenantId?: string | undefined; status?: string | undefined },
  indexed: readonly "tenantId"[] = [],
) {
  const indexedStatus = filters.status === "dead-lettered" || filters.status === "expired";
  const indexedTenant =
    filters.tenantId !== undefined && filters.type === undefined && indexed.includes("tenantId");
  return (filters.type !== undefined || filters.tenantId !== undefined) && !indexedStatus && !indexedTenant;
}

/**
 * How long after a message's `createdAt` its id may be made: the id comes from the same clock just
 * after (a batch's ids while it is validated), or runs ahead after the clock stepped back (the
 * generator never goes back in time).
 */
const ID_AHEAD_MS = 60_000;

/** The higher of two optional id bounds (ids compare as strings). */
function higherId(a: string | undefined, b: string | undefined): string | undefined {
  return a === undefined || (b !== undefined && b > a) ? b : a;
}

/**
 * Where a listing of messages created at or after `since` ends: an id is made after its message's
 * `createdAt` is read, from the same clock (and the generator never goes back in time), so no such
 * message has an id below the bound of `since` (a minute of slack, as for `until`). Without it, a
 * time range with no message in it walked the primary key down to the oldest message.
 */
function stopAt(since: number | undefined): string | undefined {
  return since === undefined ? undefined : messageIdBound(since - ID_AHEAD_MS);
}

/**
 * Where a page of messages created before `until` starts: ids sort by creation time, so rather than
 * walking back from the newest message to `until` (a month-old range read 300,000 rows of the
 * primary key beside a million messages), the walk starts at the ids made a minute after `until`;
 * `createdAt` still decides.
 */
function startBelow(after: string | undefined, until: number | undefined): string | undefined {
  if (until === undefined) return after;
  const bound = messageIdBound(until + ID_AHEAD_MS);
  return after === undefined || bound < after ? bound : after;
}
