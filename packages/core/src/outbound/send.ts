import type { Clock } from "../clock.js";
import type { OutboundConfig } from "../config.js";
import { parseDuration } from "../duration.js";
import { InvalidInputError } from "../errors.js";
import { unstorable } from "../storable-text.js";
import { quote } from "./quote.js";
import type { IdGenerator } from "../ids.js";
import type { EnqueueOptions } from "../storage/storage.js";
import { isValidEventType } from "../type-glob.js";
import type { SendEvent, SendResult } from "./types.js";

/**
 * Validates an event and writes it to the outbox: one INSERT, joining `tx` when given, and no
 * network I/O. Everything is checked before the write, so bad input never leaves a half-written row.
 */
export async function send<Tx>(
  deps: { config: OutboundConfig; clock: Clock; newId: IdGenerator; wake: () => void },
  event: SendEvent,
  options: EnqueueOptions<Tx> = {},
): Promise<SendResult> {
  const { config, clock } = deps;
  if (typeof event !== "object" || event === null) {
    throw new InvalidInputError(
      "INVALID_EVENT",
      "send() takes an event object: { type, data, idempotencyKey?, ttl?, tenantId? }.",
    );
  }
  const unknown = Object.keys(event).filter(
    (k) => !["type", "data", "idempotencyKey", "ttl", "tenantId"].includes(k),
  );
  if (unknown.length > 0) {
    throw new InvalidInputError(
      "INVALID_EVENT",
      `send() got unknown field(s) ${unknown.map((k) => JSON.stringify(k)).join(", ")}; an event has type, data, idempotencyKey, ttl and tenantId.`,
    );
  }
  if (!isValidEventType(event.type)) {
    throw new InvalidInputError(
      "INVALID_EVENT_TYPE",
      `Event type ${quote(event.type)} is invalid: use 1-255 letters, digits and "_ . : - /", e.g. "order.created".`,
    );
  }
  const payload = serialise(event.data);
  // Counted, not encoded: send() is a hot path and the storage keeps the text.
  const size = Buffer.byteLength(payload, "utf8");
  if (size > config.maxPayloadBytes) {
    throw new InvalidInputError(
      "PAYLOAD_TOO_LARGE",
      `Event data is ${size} bytes serialised; the limit is ${config.maxPayloadBytes} (outbound.maxPayloadBytes). Send a reference (an id or URL) instead of the whole object.`,
    );
  }
  const ttl = event.ttl === undefined ? undefined : parseDuration(event.ttl);
  if (event.ttl !== undefined && (ttl === undefined || ttl <= 0)) {
    throw new InvalidInputError(
      "INVALID_DURATION",
      `ttl ${quote(event.ttl)} is invalid: use a positive duration like "30s", "5m", "1d" or milliseconds.`,
    );
  }
  const idempotencyKey = optionalString(event.idempotencyKey, "idempotencyKey");
  const tenantId = optionalString(event.tenantId, "tenantId");
  const now = clock.now();
  const result = await config.storage.enqueue(
    {
      id: deps.newId("msg"),
      type: event.type,
      payload,
      tenantId,
      idempotencyKey,
      createdAt: now,
      expiresAt: ttl === undefined ? null : now + ttl,
    },
    options,
  );
  // Without a transaction the row is visible now; inside one, LISTEN/NOTIFY or the poll picks it up after commit.
  if (!result.reused) deps.wake();
  return result;
}

function serialise(data: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(data);
  } catch (error) {
    throw new InvalidInputError(
      "PAYLOAD_NOT_SERIALIZABLE",
      `Event data cannot be serialised to JSON (${error instanceof Error ? error.message : String(error)}); remove cycles and BigInt values, or convert them first.`,
    );
  }
  if (text === undefined) {
    throw new InvalidInputError(
      "PAYLOAD_NOT_SERIALIZABLE",
      "Event data is missing or not JSON (undefined, a function or a symbol); pass an object, array or primitive.",
    );
  }
  return text;
}

function optionalString(value: unknown, name: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string" || value.length === 0 || value.length > 255) {
    throw new InvalidInputError(
      "INVALID_ARGUMENT",
      `${name} must be a non-empty string of at most 255 characters.`,
    );
  }
  const reason = unstorable(value);
  if (reason !== null) {
    throw new InvalidInputError(
      "INVALID_ARGUMENT",
      `${name} ${reason}; use well-formed text (encode binary keys as hex or base64).`,
    );
  }
  return value;
}
