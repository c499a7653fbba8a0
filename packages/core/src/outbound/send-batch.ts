import { requireCapability } from "../storage/capabilities.js";
import { InvalidInputError } from "../errors.js";
import type { NewMessage } from "../storage/records.js";
import type { EnqueueOptions } from "../storage/storage.js";
import { type AnyEventCatalog, checkAgainstCatalog } from "./catalog.js";
import { type SendDeps, toNewMessage } from "./send.js";
import type { SendEvent, SendResult } from "./types.js";

/**
 * Most events one `sendBatch()` call takes. Storages write a batch in a few statements inside one
 * transaction; past this, split the events over several calls.
 */
export const SEND_BATCH_MAX_EVENTS = 10_000;

/**
 * Most bytes of serialised `data`, summed over the events, one `sendBatch()` call takes (16 MiB):
 * the batch travels to the database as a few statements, held in memory on both sides.
 */
export const SEND_BATCH_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Validates every event as `send()` does, then writes them all with one storage call: in `tx` when
 * given, else in a transaction of its own, so either every event is enqueued or none is. Results
 * are in input order; idempotency keys mean what they mean for `send()` called once per event in order.
 */
export async function sendBatch<Tx>(
  deps: SendDeps,
  events: readonly SendEvent[],
  options: EnqueueOptions<Tx> = {},
): Promise<SendResult[]> {
  if (!Array.isArray(events)) {
    throw new InvalidInputError(
      "INVALID_ARGUMENT",
      "sendBatch() takes an array of events: [{ type, data, idempotencyKey?, ttl?, tenantId? }, ...].",
    );
  }
  if (events.length > SEND_BATCH_MAX_EVENTS) {
    throw new InvalidInputError(
      "BATCH_TOO_LARGE",
      `sendBatch() got ${events.length} events; the limit is ${SEND_BATCH_MAX_EVENTS} per call. Split them over several calls (each is atomic on its own), or pass one \`tx\` to all of them.`,
    );
  }
  if (events.length === 0) return [];
  const checked = !deps.config.events ? events : await checkAll(deps.config.events, events);
  const now = deps.clock.now();
  const messages: NewMessage[] = new Array(events.length);
  let bytes = 0;
  for (let i = 0; i < events.length; i++) {
    const { message, size } = toNewMessage(deps, checked[i] as SendEvent, now, `events[${i}]`);
    bytes += size;
    if (bytes > SEND_BATCH_MAX_BYTES) {
      throw new InvalidInputError(
        "BATCH_TOO_LARGE",
        `sendBatch() events[0..${i}] already hold ${bytes} bytes of serialised data; the limit is ${SEND_BATCH_MAX_BYTES} per call. Split the events over several calls, or pass one \`tx\` to all of them.`,
      );
    }
    messages[i] = message;
  }
  const traceContext = deps.telemetry?.sendContext();
  if (traceContext !== undefined) for (const message of messages) message.traceContext = traceContext;
  const store = requireCapability(deps.config.storage, "batchSend", "sendBatch()");
  const results = await store.enqueueMany(messages, options);
  // One wake-up per batch: without `tx` the rows are visible now; inside one, NOTIFY or the poll finds them after commit.
  if (results.some((result) => !result.reused)) deps.wake();
  return results;
}

/**
 * Every event checked against the catalog (schemas may be asynchronous: all run at once). The error
 * thrown is that of the first failing event in input order, whichever schema settled first.
 */
async function checkAll(catalog: AnyEventCatalog, events: readonly SendEvent[]): Promise<SendEvent[]> {
  const settled = await Promise.allSettled(
    events.map((event, i) => checkAgainstCatalog(catalog, event, `events[${i}]`)),
  );
  return settled.map((result) => {
    if (result.status === "rejected") throw result.reason;
    return result.value;
  });
}
