// The operations API of issue 17 (`Page`, `deadLetters.list`, `stats`, `attempts.recent`, replay's
// `onProgress`), as agreed for `postel.outbound`. Every command reaches it through this module only.
//
// TODO(#17, at merge): the operations API is being built on another branch. When it lands, each
// function below becomes a one-line call to `postel.outbound` (messages.list / endpoints.list /
// deadLetters.list / stats / attempts.recent / replay with onProgress), and the types come from
// @postel/core. Until then they implement the contract on what exists today: bare arrays wrapped
// into pages, dead letters and stats assembled from the Storage reads, recent attempts found through
// the messages that can have them, and replay reporting its progress once, at the end.
import type {
  AttemptRecord,
  DeliveryStatus,
  Endpoint,
  EndpointState,
  Message,
  MessageStatus,
  ReplayedDelivery,
  ReplaySelection,
  Storage,
} from "@postel/core";
import { compact } from "./compact.js";
import type { OpenDatabase } from "./database.js";

/** One page of a keyset-paginated listing; pass `nextCursor` back as `cursor` (null: no more). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** A dead-lettered delivery with its message's type, tenant and time. */
export interface DeadLetter {
  deliveryId: string;
  messageId: string;
  endpointId: string;
  webhookId: string;
  type: string;
  tenantId: string | null;
  attemptsMade: number;
  lastError: string | null;
  createdAt: number;
  deadLetteredAt: number;
}

/** One endpoint's line of `stats()`. */
export interface EndpointStats {
  id: string;
  url: string;
  description: string | null;
  state: EndpointState;
  circuitOpenUntil: number | null;
  due: number;
  inFlight: number;
  scheduled: number;
  held: number;
  deadLetters: number;
  attempts: number;
  failures: number;
  failureRate: number | null;
}

/** Backlog, dead letters and failure rates, now and over a window. */
export interface OutboundStats {
  at: number;
  windowMs: number;
  backlog: {
    due: number;
    oldestDueAt: number | null;
    inFlight: number;
    scheduled: number;
    held: number;
    unfanned: number;
  };
  deadLetters: number;
  attempts: { total: number; failures: number; failureRate: number | null };
  endpoints: EndpointStats[];
}

type Time = Date | number;
type Ops = Pick<OpenDatabase, "postel" | "storage">;

/** `postel.outbound.messages.list`, paged: newest first. */
export async function listMessages(
  { postel }: Ops,
  options: {
    status?: MessageStatus;
    type?: string;
    tenantId?: string;
    since?: Time;
    until?: Time;
    limit: number;
    cursor?: string;
  },
): Promise<Page<Message>> {
  const { cursor, ...filters } = options;
  return page(await postel.outbound.messages.list(compact({ ...filters, before: cursor })), options.limit);
}

/** `postel.outbound.endpoints.list`, paged: oldest first. */
export async function listEndpoints(
  { postel }: Ops,
  options: { tenantId?: string; state?: EndpointState; limit: number; cursor?: string },
): Promise<Page<Endpoint>> {
  const { cursor, ...filters } = options;
  return page(await postel.outbound.endpoints.list(compact({ ...filters, after: cursor })), options.limit);
}

/** `postel.outbound.deadLetters.list`: newest first; `since`/`until` on when it was dead-lettered. */
export async function listDeadLetters(
  { storage }: Ops,
  options: { endpointId?: string; since?: number; until?: number; limit: number; cursor?: string },
): Promise<Page<DeadLetter>> {
  const rows = await storage.listDeadLetters({
    limit: options.limit,
    before: options.cursor,
    endpointId: options.endpointId,
  });
  const items: DeadLetter[] = [];
  for (const d of rows) {
    if (options.since !== undefined && d.updatedAt < options.since) continue;
    if (options.until !== undefined && d.updatedAt >= options.until) continue;
    const message = await storage.getMessage(d.messageId);
    items.push({
      deliveryId: d.id,
      messageId: d.messageId,
      endpointId: d.endpointId,
      webhookId: d.webhookId,
      type: message?.type ?? "",
      tenantId: message?.tenantId ?? null,
      attemptsMade: d.attemptsMade,
      lastError: d.lastError,
      createdAt: message?.createdAt ?? d.createdAt,
      deadLetteredAt: d.updatedAt,
    });
  }
  return { items, nextCursor: rows.length === options.limit ? rows.at(-1)!.id : null };
}

/**
 * `postel.outbound.stats`. Interim: pending deliveries count as due (leased and scheduled ones are not
 * told apart, and the oldest due time is unknown); attempts come from the endpoints' health buckets.
 */
export async function stats(
  { storage }: Ops,
  options: { windowMs: number; now: number },
): Promise<OutboundStats> {
  const since = options.now - options.windowMs;
  const endpoints: EndpointStats[] = [];
  for (const endpoint of await storage.allEndpoints()) {
    const counts = await storage.countDeliveries(endpoint.id);
    const health = await storage.endpointHealth(endpoint.id, since);
    endpoints.push({
      id: endpoint.id,
      url: endpoint.url,
      description: endpoint.description,
      state: endpoint.state,
      circuitOpenUntil: endpoint.circuitOpenUntil,
      due: counts.pending ?? 0,
      inFlight: 0,
      scheduled: 0,
      held: counts.held ?? 0,
      deadLetters: counts["dead-lettered"] ?? 0,
      attempts: health.attempts,
      failures: health.failures,
      failureRate: rate(health.failures, health.attempts),
    });
  }
  const counts: Partial<Record<DeliveryStatus, number>> = await storage.countDeliveries();
  const total = endpoints.reduce((n, e) => n + e.attempts, 0);
  const failures = endpoints.reduce((n, e) => n + e.failures, 0);
  return {
    at: options.now,
    windowMs: options.windowMs,
    backlog: {
      due: counts.pending ?? 0,
      oldestDueAt: null,
      inFlight: 0,
      scheduled: 0,
      held: counts.held ?? 0,
      unfanned: await countUnfanned(storage),
    },
    deadLetters: counts["dead-lettered"] ?? 0,
    attempts: { total, failures, failureRate: rate(failures, total) },
    endpoints,
  };
}

/**
 * `postel.outbound.attempts.recent`: attempts started at or after `since`, oldest first. Interim: the
 * attempts of pending messages and of messages created since `since` (a retry that finishes its
 * message between two polls is missed).
 */
export async function recentAttempts(
  { storage }: Ops,
  options: { since: number; limit: number },
): Promise<AttemptRecord[]> {
  const pending = await storage.listMessages({ limit: 200, status: "pending" });
  const recent = await storage.listMessages({ limit: 200, since: options.since });
  const ids = new Set([...pending, ...recent].map((m) => m.id));
  const attempts: AttemptRecord[] = [];
  for (const id of ids) {
    for (const attempt of await storage.listAttempts(id)) {
      if (attempt.startedAt >= options.since) attempts.push(attempt);
    }
  }
  attempts.sort((a, b) => a.startedAt - b.startedAt || a.attemptNumber - b.attemptNumber);
  return attempts.slice(0, options.limit);
}

/** `postel.outbound.replay` with `onProgress`. Interim: progress is reported once, when done. */
export async function replay(
  { postel }: Ops,
  selection: ReplaySelection,
  options: {
    freshWebhookId: boolean;
    status?: DeliveryStatus[];
    limit?: number;
    onProgress: (progress: { replayed: number; total: number }) => void;
  },
): Promise<ReplayedDelivery[]> {
  const { onProgress, ...replayOptions } = options;
  const replayed = await postel.outbound.replay(selection, replayOptions);
  onProgress({ replayed: replayed.length, total: replayed.length });
  return replayed;
}

function page<T extends { id: string }>(items: T[], limit: number): Page<T> {
  return { items, nextCursor: items.length === limit ? items.at(-1)!.id : null };
}

function rate(failures: number, attempts: number): number | null {
  return attempts === 0 ? null : failures / attempts;
}

async function countUnfanned(storage: Storage<unknown>): Promise<number> {
  let count = 0;
  let before: string | undefined;
  for (;;) {
    const rows = await storage.listMessages({ limit: 1000, before, status: "pending" });
    count += rows.filter((m) => m.fannedOutAt === null).length;
    if (rows.length < 1000) return count;
    before = rows.at(-1)!.id;
  }
}
