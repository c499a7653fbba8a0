import type { Clock } from "../clock.js";
import type { OutboundConfig } from "../config/resolved.js";
import { parseDuration } from "../duration.js";
import { InvalidInputError } from "../errors.js";
import { requireCapability } from "../storage/capabilities.js";
import { unstorable } from "../storable-text.js";
import { checkAgainstCatalog } from "./catalog.js";
import { quote } from "./quote.js";
import type { IdGenerator } from "../ids.js";
import type { NewMessage } from "../storage/records.js";
import type { EnqueueOptions } from "../storage/storage.js";
import { isValidEventType } from "../type-glob.js";
import type { Telemetry } from "../telemetry/telemetry.js";
import type { SendEvent, SendResult } from "./types.js";

/** What `send()` and `sendBatch()` need from the Postel instance. */
export interface SendDeps {
  config: OutboundConfig;
  clock: Clock;
  newId: IdGenerator;
  wake: () => void;
  /** Null when telemetry is off: then no trace context is read or stored. */
  telemetry: Telemetry | null;
}

/**
 * Validates an event (against the event catalog too, when there is one) and writes it to the
 * outbox: one INSERT, joining `tx` when given, and no network I/O. Everything is checked before the
 * write, so bad input never leaves a half-written row. With a catalog, what is stored (and signed and
 * sent) is the schema's output for `data`.
 */
export async function send<Tx>(
  deps: SendDeps,
  event: SendEvent,
  options: EnqueueOptions<Tx> = {},
): Promise<SendResult> {
  const catalog = deps.config.events;
  const checked = !catalog ? event : await checkAgainstCatalog(catalog, event);
  const { message } = toNewMessage(deps, checked, deps.clock.now());
  if (deps.telemetry !== null) {
    const traceContext = deps.telemetry.sendContext();
    if (traceContext !== undefined) message.traceContext = traceContext;
  }
  const result = await deps.config.storage.enqueue(message, options);
  // Without a transaction the row is visible now; inside one, LISTEN/NOTIFY or the poll picks it up after commit.
  if (!result.reused) deps.wake();
  return result;
}

/**
 * Checks one event exactly as `send()` does and returns the message to enqueue, created at `now`,
 * with the byte length of its payload.
 * Throws a coded `InvalidInputError`; with `path` (e.g. `events[3]`), its message starts with the
 * path of the bad field (`events[3].type: ...`).
 */
export function toNewMessage(
  deps: Pick<SendDeps, "config" | "newId">,
  event: SendEvent,
  now: number,
  path?: string,
): { message: NewMessage; size: number } {
  const { config } = deps;
  const invalid = (code: string, field: string, message: string) =>
    new InvalidInputError(
      code,
      path === undefined ? message : `${path}${field === "" ? "" : `.${field}`}: ${message}`,
    );
  if (typeof event !== "object" || event === null) {
    throw invalid(
      "INVALID_EVENT",
      "",
      "send() takes an event object: { type, data, idempotencyKey?, ttl?, tenantId?, orderingKey? }.",
    );
  }
  const unknown = Object.keys(event).filter(
    (k) => !["type", "data", "idempotencyKey", "ttl", "tenantId", "orderingKey"].includes(k),
  );
  if (unknown.length > 0) {
    throw invalid(
      "INVALID_EVENT",
      "",
      `send() got unknown field(s) ${unknown.map((k) => JSON.stringify(k)).join(", ")}; an event has type, data, idempotencyKey, ttl, tenantId and orderingKey.`,
    );
  }
  if (!isValidEventType(event.type)) {
    throw invalid(
      "INVALID_EVENT_TYPE",
      "type",
      `Event type ${quote(event.type)} is invalid: use 1-255 letters, digits and "_ . : - /", e.g. "order.created".`,
    );
  }
  const payload = serialise(event.data, (code, message) => invalid(code, "data", message));
  // Counted, not encoded: send() is a hot path and the storage keeps the text.
  const size = Buffer.byteLength(payload, "utf8");
  if (size > config.maxPayloadBytes) {
    throw invalid(
      "PAYLOAD_TOO_LARGE",
      "data",
      `Event data is ${size} bytes serialised; the limit is ${config.maxPayloadBytes} (outbound.maxPayloadBytes). Send a reference (an id or URL) instead of the whole object.`,
    );
  }
  const ttl = event.ttl === undefined ? undefined : parseDuration(event.ttl);
  if (event.ttl !== undefined && (ttl === undefined || ttl <= 0)) {
    throw invalid(
      "INVALID_DURATION",
      "ttl",
      `ttl ${quote(event.ttl)} is invalid: use a positive duration like "30s", "5m", "1d" or milliseconds.`,
    );
  }
  const idempotencyKey = optionalString(event.idempotencyKey, "idempotencyKey", invalid);
  const tenantId = optionalString(event.tenantId, "tenantId", invalid);
  const orderingKey = optionalString(event.orderingKey, "orderingKey", invalid);
  if (orderingKey !== null) requireCapability(config.storage, "ordering", "send() with an orderingKey");
  const message: NewMessage = {
    id: deps.newId("msg"),
    type: event.type,
    payload,
    tenantId,
    idempotencyKey,
    createdAt: now,
    expiresAt: ttl === undefined ? null : now + ttl,
  };
  if (orderingKey !== null) message.orderingKey = orderingKey;
  return { message, size };
}

type Invalid = (code: string, field: string, message: string) => InvalidInputError;

function serialise(data: unknown, invalid: (code: string, message: string) => InvalidInputError): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(data);
  } catch (error) {
    throw invalid(
      "PAYLOAD_NOT_SERIALIZABLE",
      `Event data cannot be serialised to JSON (${error instanceof Error ? error.message : String(error)}); remove cycles and BigInt values, or convert them first.`,
    );
  }
  if (text === undefined) {
    throw invalid(
      "PAYLOAD_NOT_SERIALIZABLE",
      "Event data is missing or not JSON (undefined, a function or a symbol); pass an object, array or primitive.",
    );
  }
  return text;
}

function optionalString(value: unknown, name: string, invalid: Invalid): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string" || value.length === 0 || value.length > 255) {
    throw invalid("INVALID_ARGUMENT", name, `${name} must be a non-empty string of at most 255 characters.`);
  }
  const reason = unstorable(value);
  if (reason !== null) {
    throw invalid(
      "INVALID_ARGUMENT",
      name,
      `${name} ${reason}; use well-formed text (encode binary keys as hex or base64).`,
    );
  }
  return value;
}
