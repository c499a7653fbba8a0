import type { OutboundConfig } from "../config.js";
import { NotFoundError } from "../errors.js";
import type { AttemptRecord, DeliveryRecord, MessageRecord, MessageStatus } from "../storage/records.js";
import { isLookupId } from "./lookup-id.js";
import { quote } from "./quote.js";
import type { Message } from "./types.js";

/** Filters of `messages.list`. Newest first. */
export interface ListMessagesOptions {
  status?: MessageStatus;
  type?: string;
  tenantId?: string;
  since?: Date | number;
  until?: Date | number;
  /** Page size, default 100. */
  limit?: number;
  /** Cursor: the id of the last message of the previous page. */
  before?: string;
}

/** `postel.outbound.messages`: the outbox and its audit trail. */
export interface MessagesApi {
  /** The message, or null. */
  get(id: string): Promise<Message | null>;
  list(options?: ListMessagesOptions): Promise<Message[]>;
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

const time = (t: Date | number | undefined) => (t instanceof Date ? t.getTime() : t);

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
    async list(options = {}) {
      const rows = await storage.listMessages({
        limit: options.limit ?? 100,
        before: options.before,
        status: options.status,
        type: options.type,
        tenantId: options.tenantId,
        since: time(options.since),
        until: time(options.until),
      });
      return rows.map(toMessage);
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
