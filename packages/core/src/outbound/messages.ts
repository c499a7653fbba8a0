import * as v from "valibot";
import type { OutboundConfig } from "../config.js";
import { NotFoundError } from "../errors.js";
import { messageIdBound } from "../ids.js";
import type { AttemptRecord, DeliveryRecord, MessageRecord, MessageStatus } from "../storage/records.js";
import { isLookupId } from "./lookup-id.js";
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
   * repeated). Bad options throw `InvalidInputError` (`INVALID_ARGUMENT`, or `INVALID_CURSOR`).
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
      const rows = await storage.listMessages({ ...filters, limit: limit + 1, after });
      return toPage(rows, limit, "messages", (row) => row.id, toMessage);
    },
    async deliveries(id) {
      await mustExist(id);
      return storage.listDeliveries(id);
    },
    async attempts(id) {
      await mustExist(id);
      return storage.listAttempts(id);
    },
  };
}

/**
 * How long after a message's `createdAt` its id may be made: the id comes from the same clock just
 * after (a batch's ids while it is validated), or runs ahead after the clock stepped back (the
 * generator never goes back in time).
 */
const ID_AHEAD_MS = 60_000;

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
