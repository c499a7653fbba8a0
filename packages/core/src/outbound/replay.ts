import { requireCapability } from "../storage/capabilities.js";
import type { Clock } from "../clock.js";
import type { OutboundConfig } from "../config/resolved.js";
import { InvalidInputError, NotFoundError } from "../errors.js";
import { type IdGenerator, idTime } from "../ids.js";
import type { DeliveryRecord, DeliveryStatus } from "../storage/records.js";
import type { MessageLookup, OperationsStore, ReplayStore } from "../storage/storage.js";
import { toMessage } from "./messages.js";
import { isLookupId } from "./lookup-id.js";
import { quote } from "./quote.js";
import type { Message } from "./types.js";

/**
 * What to replay: one message id, many, an endpoint over a time range, a predicate, or deliveries by
 * their own ids (`dlv_…`, as `messages.deliveries()` and the dead letters show them).
 */
export type ReplaySelection =
  | { messageId: string; endpointId?: string | undefined }
  | { messageIds: string[]; endpointId?: string | undefined }
  | { deliveryIds: string[] }
  | { endpointId: string; since: Date | number; until?: Date | number }
  | { filter: (message: Message) => boolean; since?: Date | number; until?: Date | number };

/** Options of `replay`. */
export interface ReplayOptions {
  /** Give replayed deliveries a new `webhook-id`, so receivers that deduplicate process them again. Default false. */
  freshWebhookId?: boolean;
  /** Replay only deliveries in these terminal statuses. Default: every terminal status. */
  status?: DeliveryStatus[];
  /** At most this many deliveries. Default 10,000. */
  limit?: number;
  /**
   * Select, but reset nothing: returns what a replay would re-enqueue now (with the webhook ids the
   * deliveries have), to show a count before running it. Default false.
   */
  dryRun?: boolean;
  /**
   * Called after each chunk of up to 1,000 deliveries is re-enqueued (and once with `total: 0` when
   * nothing matched), for progress on long replays. Each chunk commits on its own, so workers start
   * on the first while the rest are reset.
   */
  onProgress?: (progress: ReplayProgress) => void;
}

/** Progress of a `replay`: deliveries re-enqueued so far, out of `total` selected. */
export interface ReplayProgress {
  replayed: number;
  total: number;
}

/** One delivery `replay` put back in the queue. */
export interface ReplayedDelivery {
  messageId: string;
  deliveryId: string;
  endpointId: string;
  webhookId: string;
}

const PAGE = 500;
/** Deliveries reset per `resetDeliveries` call (one transaction each). */
const RESET_CHUNK = 1_000;

/**
 * Re-enqueues terminal deliveries (`succeeded`, `failed`, `dead-lettered`, `expired`) and moves their
 * messages back to `pending`. Returns exactly what was re-enqueued.
 */
export async function replay(
  deps: { config: OutboundConfig; clock: Clock; newId: IdGenerator; wake: () => void },
  selection: ReplaySelection & ReplayOptions,
  options: ReplayOptions = {},
): Promise<ReplayedDelivery[]> {
  const { storage } = deps.config;
  const store = requireCapability(storage, "replay", "replay()");
  const freshWebhookId = options.freshWebhookId ?? selection.freshWebhookId ?? false;
  const statuses = options.status ?? selection.status;
  const limit = options.limit ?? selection.limit ?? 10_000;
  const onProgress = options.onProgress ?? selection.onProgress;
  if (onProgress !== undefined && typeof onProgress !== "function") {
    throw new InvalidInputError(
      "INVALID_ARGUMENT",
      "replay onProgress must be a function ({ replayed, total }) => void.",
    );
  }
  let candidates: DeliveryRecord[];
  if ("messageId" in selection || "messageIds" in selection) {
    const ids = "messageId" in selection ? [selection.messageId] : selection.messageIds;
    for (const id of ids) {
      if (!isLookupId(id) || !(await storage.getMessage(id))) {
        throw new NotFoundError(
          "MESSAGE_NOT_FOUND",
          `No message with id ${quote(id)}; nothing was replayed.`,
        );
      }
    }
    // With endpointId, one delivery per message (message × endpoint): e.g. one dead letter, not
    // every dead-lettered delivery of its message.
    const { endpointId } = selection;
    candidates = await store.findReplayable({ messageIds: ids, endpointId, statuses }, limit);
    if (endpointId !== undefined) candidates = candidates.filter((d) => d.endpointId === endpointId);
  } else if ("deliveryIds" in selection) {
    candidates = await byDeliveryIds(
      storage,
      requireCapability(storage, "operations", "replay({ deliveryIds })"),
      selection.deliveryIds,
    );
  } else if ("endpointId" in selection && selection.endpointId !== undefined) {
    if (!isLookupId(selection.endpointId) || !(await storage.getEndpoint(selection.endpointId))) {
      throw new NotFoundError(
        "ENDPOINT_NOT_FOUND",
        `No endpoint with id ${quote(selection.endpointId)}; nothing was replayed.`,
      );
    }
    const since = toTime(selection.since, "since");
    const until = selection.until === undefined ? deps.clock.now() + 1 : toTime(selection.until, "until");
    candidates = await store.findReplayable(
      { endpointId: selection.endpointId, since, until, statuses },
      limit,
    );
  } else if ("filter" in selection && typeof selection.filter === "function") {
    candidates = await byPredicate(
      store,
      requireCapability(storage, "operations", "replay({ filter })"),
      selection,
      limit,
      statuses,
    );
  } else {
    throw new InvalidInputError(
      "INVALID_ARGUMENT",
      "replay() takes { messageId }, { messageIds }, { deliveryIds }, { endpointId, since, until? } or { filter }.",
    );
  }
  // Storages filter by status before their limit; filtering again keeps one that ignores it exact.
  const chosen = (statuses ? candidates.filter((d) => statuses.includes(d.status)) : candidates).slice(
    0,
    limit,
  );
  if (options.dryRun ?? selection.dryRun) {
    return chosen.map((d) => ({
      messageId: d.messageId,
      deliveryId: d.id,
      endpointId: d.endpointId,
      webhookId: d.webhookId,
    }));
  }
  const resets = chosen.map((d) => ({
    deliveryId: d.id,
    webhookId: freshWebhookId ? deps.newId("msg") : d.webhookId,
  }));
  const reset = new Set<string>();
  for (let start = 0; start < resets.length || start === 0; start += RESET_CHUNK) {
    const chunk = resets.slice(start, start + RESET_CHUNK);
    const done = chunk.length === 0 ? [] : await store.resetDeliveries(chunk, deps.clock.now());
    for (const id of done) reset.add(id);
    if (done.length > 0) deps.wake();
    onProgress?.({ replayed: reset.size, total: resets.length });
  }
  return chosen
    .map((d, i) => ({
      messageId: d.messageId,
      deliveryId: d.id,
      endpointId: d.endpointId,
      webhookId: resets[i]!.webhookId,
    }))
    .filter((d) => reset.has(d.deliveryId));
}

// Each delivery, once, found before anything is reset: a typed error for an id that names none, or
// one still at work (or cancelled) that replay cannot reset.
async function byDeliveryIds(
  storage: MessageLookup,
  operations: OperationsStore,
  ids: unknown,
): Promise<DeliveryRecord[]> {
  if (!Array.isArray(ids) || ids.length === 0) {
    throw new InvalidInputError(
      "INVALID_ARGUMENT",
      'replay({ deliveryIds }) takes a non-empty array of delivery ids, e.g. ["dlv_01j…"].',
    );
  }
  const found: DeliveryRecord[] = [];
  for (const id of new Set<unknown>(ids)) {
    const delivery = await findDelivery(storage, operations, id);
    if (delivery === null) {
      throw new NotFoundError(
        "DELIVERY_NOT_FOUND",
        `No delivery with id ${quote(id)}; nothing was replayed. A message's deliveries are listed by messages.deliveries(id).`,
      );
    }
    if (delivery.status === "pending" || delivery.status === "held") {
      throw new InvalidInputError(
        "DELIVERY_NOT_FINISHED",
        `Delivery ${quote(id)} is still ${delivery.status === "held" ? "held (its endpoint is disabled)" : "pending (waiting for an attempt or a retry)"}: only finished deliveries can be replayed; nothing was replayed.`,
      );
    }
    if (delivery.status === "cancelled") {
      throw new InvalidInputError(
        "DELIVERY_NOT_REPLAYABLE",
        `Delivery ${quote(id)} was cancelled when its endpoint was deleted: it cannot be replayed; nothing was replayed.`,
      );
    }
    found.push(delivery);
  }
  return found;
}

// How far a message's creation time may be ahead of its delivery's (instances' clocks differ), and
// how far back the fan-out's own clock may step.
const CLOCK_SKEW_MS = 60_000;
const FANOUT_SKEW_MS = 1_000;
// Pages of messages fanned out before a delivery was made, one after the other, after which its
// message is taken to be older than any still to come.
const EARLIER_PAGES = 4;

/**
 * The delivery with this id, read through its message (storage reads deliveries by message): a
 * delivery is made when its message is fanned out, after the message was created and, by the same
 * clock, before the message's `fannedOutAt` is set; its time-sortable id says when. So the messages
 * created up to then are walked newest first, looking into those fanned out since, until a few
 * pages in a row were all fanned out before it (fan-out takes messages oldest first). Usually one page.
 */
async function findDelivery(
  storage: MessageLookup,
  operations: OperationsStore,
  id: unknown,
): Promise<DeliveryRecord | null> {
  const madeAt = typeof id === "string" && isLookupId(id) && id.startsWith("dlv_") ? idTime(id) : null;
  if (madeAt === null) return null;
  let after: string | undefined;
  for (let earlier = 0; earlier < EARLIER_PAGES; ) {
    const page = await operations.listMessages({ limit: PAGE, after, until: madeAt + CLOCK_SKEW_MS });
    const since = page.filter((m) => m.fannedOutAt === null || m.fannedOutAt >= madeAt - FANOUT_SKEW_MS);
    // Its own message was fanned out within milliseconds of making it: look there first.
    const candidates = since
      .filter((m) => m.fannedOutAt !== null)
      .sort((a, b) => a.fannedOutAt! - b.fannedOutAt!);
    for (const message of candidates) {
      const delivery = (await storage.listDeliveries(message.id)).find((d) => d.id === id);
      if (delivery !== undefined) return delivery;
    }
    if (page.length < PAGE) return null;
    earlier = since.length === 0 ? earlier + 1 : 0;
    after = page[page.length - 1]!.id;
  }
  return null;
}

async function byPredicate(
  store: ReplayStore,
  operations: OperationsStore,
  selection: { filter: (message: Message) => boolean; since?: Date | number; until?: Date | number },
  limit: number,
  statuses: DeliveryStatus[] | undefined,
): Promise<DeliveryRecord[]> {
  const found: DeliveryRecord[] = [];
  let after: string | undefined;
  const since = selection.since === undefined ? undefined : toTime(selection.since, "since");
  const until = selection.until === undefined ? undefined : toTime(selection.until, "until");
  while (found.length < limit) {
    const page = await operations.listMessages({ limit: PAGE, after, since, until });
    if (page.length === 0) break;
    const ids = page.filter((record) => selection.filter(toMessage(record))).map((record) => record.id);
    if (ids.length > 0)
      found.push(...(await store.findReplayable({ messageIds: ids, statuses }, limit - found.length)));
    after = page[page.length - 1]!.id;
    if (page.length < PAGE) break;
  }
  return found;
}

function toTime(value: Date | number, name: string): number {
  const t = value instanceof Date ? value.getTime() : value;
  if (typeof t !== "number" || !Number.isFinite(t)) {
    throw new InvalidInputError("INVALID_ARGUMENT", `replay ${name} must be a Date or epoch milliseconds.`);
  }
  return t;
}
