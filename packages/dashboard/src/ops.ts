/**
 * The operations API the pages call, in the shape agreed for `postel.outbound` (keyset pages, dead
 * letters, stats, recent attempts).
 *
 * TODO(operations API): `postel.outbound` gains exactly these calls (`Page<T>` lists with `cursor`,
 * `deadLetters.list`, `stats`, `attempts.recent`). When it lands, `operations()` becomes
 * `return postel.outbound` (give or take the types below, which then come from `@postel/core`),
 * and the stand-ins under "Interim" are deleted. Nothing else in this package changes: every page
 * and action goes through `Operations`.
 *
 * Until then the stand-ins build the contract on today's public API only (DESIGN.md §8: operator
 * surfaces read through the operations API). They are exact for pagination and dead letters, and
 * sampled for stats and recent attempts (bounded reads, so a page stays fast on a large outbox):
 * counts stop at `SAMPLE` and attempts are those of the newest messages of the window.
 */
import type {
  AttemptRecord,
  DeliveryRecord,
  Endpoint,
  EndpointState,
  ListMessagesOptions,
  Message,
  MessageStatus,
  Outbound,
  ReplayedDelivery,
  ReplayOptions,
  ReplaySelection,
  Storage,
} from "@postel/core";

/** One page of a keyset-paginated listing; pass `nextCursor` back as `cursor` for the next page (null: no more). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** One dead-lettered delivery, with what an operator needs to decide on a replay. */
export interface DeadLetter {
  deliveryId: string;
  messageId: string;
  endpointId: string;
  webhookId: string;
  /** The message's type. */
  type: string;
  /** The message's tenant. */
  tenantId: string | null;
  attemptsMade: number;
  lastError: string | null;
  /** The message's `createdAt`. */
  createdAt: number;
  /** When the delivery was dead-lettered (its `updatedAt`). */
  deadLetteredAt: number;
}

/** The outbox at a glance: backlog, dead letters and attempts over a window, overall and per endpoint. */
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

/** One endpoint's line of `OutboundStats`. */
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

/** Filters of the messages listing. */
export interface MessageFilter {
  status?: MessageStatus | undefined;
  type?: string | undefined;
  tenantId?: string | undefined;
  since?: number | undefined;
  until?: number | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

/** Filters of the dead-letter listing (`since`/`until` apply to `deadLetteredAt`). */
export interface DeadLetterFilter {
  endpointId?: string | undefined;
  since?: number | undefined;
  until?: number | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

/** What the dashboard calls: the operations API of `postel.outbound`. */
export interface Operations {
  endpoints: {
    list(options?: { limit?: number; cursor?: string | undefined }): Promise<Page<Endpoint>>;
    get(id: string): Promise<Endpoint | null>;
    enable(id: string): Promise<Endpoint>;
    disable(id: string, reason?: string): Promise<Endpoint>;
    rotateSecret(id: string, options?: { overlap?: number }): Promise<string>;
    secret(id: string): Promise<string>;
  };
  messages: {
    get(id: string): Promise<Message | null>;
    list(options?: MessageFilter): Promise<Page<Message>>;
    deliveries(id: string): Promise<DeliveryRecord[]>;
    attempts(id: string): Promise<AttemptRecord[]>;
  };
  deadLetters: { list(options?: DeadLetterFilter): Promise<Page<DeadLetter>> };
  stats(options?: { window?: number }): Promise<OutboundStats>;
  attempts: { recent(options: { since: number; limit?: number }): Promise<AttemptRecord[]> };
  replay(selection: ReplaySelection, options?: ReplayOptions): Promise<ReplayedDelivery[]>;
}

/** The part of a Postel instance the dashboard uses: its public outbound API. */
export interface DashboardPostel {
  outbound: Pick<Outbound<Storage<unknown>>, "endpoints" | "messages" | "replay">;
}

/** The operations API of `postel`. */
export function operations(postel: DashboardPostel, now: () => number): Operations {
  const { endpoints, messages, replay } = postel.outbound;
  const listMessages = async (filter: MessageFilter): Promise<Page<Message>> => {
    const limit = filter.limit ?? 100;
    const query: ListMessagesOptions = { limit: limit + 1 };
    if (filter.status !== undefined) query.status = filter.status;
    if (filter.type !== undefined) query.type = filter.type;
    if (filter.tenantId !== undefined) query.tenantId = filter.tenantId;
    if (filter.since !== undefined) query.since = filter.since;
    if (filter.until !== undefined) query.until = filter.until;
    if (filter.cursor !== undefined) query.before = filter.cursor;
    return pageOf(await messages.list(query), limit);
  };
  const recentAttempts = (options: { since: number; limit?: number }) =>
    interimRecentAttempts(postel, options.since, options.limit ?? 1000);
  return {
    endpoints: {
      async list(options = {}) {
        const limit = options.limit ?? 100;
        const rows = await endpoints.list({
          limit: limit + 1,
          ...(options.cursor === undefined ? {} : { after: options.cursor }),
        });
        return pageOf(rows, limit);
      },
      get: (id) => endpoints.get(id),
      enable: (id) => endpoints.enable(id),
      disable: (id, reason) => endpoints.disable(id, reason),
      rotateSecret: (id, options) => endpoints.rotateSecret(id, options),
      secret: (id) => endpoints.secret(id),
    },
    messages: {
      get: (id) => messages.get(id),
      list: listMessages,
      deliveries: (id) => messages.deliveries(id),
      attempts: (id) => messages.attempts(id),
    },
    deadLetters: { list: (options = {}) => interimDeadLetters(postel, listMessages, options) },
    stats: async (options = {}) => {
      const windowMs = options.window ?? 3_600_000;
      const at = now();
      return interimStats(postel, listMessages, await recentAttempts({ since: at - windowMs }), at, windowMs);
    },
    attempts: { recent: recentAttempts },
    replay: (selection, options) => replay(selection, options),
  };
}

function pageOf<T extends { id: string }>(rows: T[], limit: number): Page<T> {
  const items = rows.slice(0, limit);
  return { items, nextCursor: rows.length > limit ? items[items.length - 1]!.id : null };
}

// ---- Interim: stand-ins for the calls the operations API adds (delete when it lands) ----

/** How many messages a sampled stand-in reads at most. */
const SAMPLE = 100;

async function mapConcurrently<T, R>(items: T[], fn: (item: T) => Promise<R>, width = 8): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return results;
}

/** Dead letters from dead-lettered messages, one page of messages at a time (the cursor is a message id). */
async function interimDeadLetters(
  postel: DashboardPostel,
  listMessages: (filter: MessageFilter) => Promise<Page<Message>>,
  filter: DeadLetterFilter,
): Promise<Page<DeadLetter>> {
  const page = await listMessages({
    status: "dead-lettered",
    limit: filter.limit ?? 50,
    cursor: filter.cursor,
  });
  const deliveries = await mapConcurrently(page.items, (m) => postel.outbound.messages.deliveries(m.id));
  const items = page.items.flatMap((message, i) =>
    deliveries[i]!.filter(
      (d) =>
        d.status === "dead-lettered" &&
        (filter.endpointId === undefined || d.endpointId === filter.endpointId) &&
        (filter.since === undefined || d.updatedAt >= filter.since) &&
        (filter.until === undefined || d.updatedAt < filter.until),
    ).map((d) => ({
      deliveryId: d.id,
      messageId: message.id,
      endpointId: d.endpointId,
      webhookId: d.webhookId,
      type: message.type,
      tenantId: message.tenantId,
      attemptsMade: d.attemptsMade,
      lastError: d.lastError,
      createdAt: message.createdAt,
      deadLetteredAt: d.updatedAt,
    })),
  );
  return { items, nextCursor: page.nextCursor };
}

/** Attempts of the newest `SAMPLE` messages created since `since`, oldest first. */
async function interimRecentAttempts(
  postel: DashboardPostel,
  since: number,
  limit: number,
): Promise<AttemptRecord[]> {
  const recent = await postel.outbound.messages.list({ since, limit: SAMPLE });
  const trails = await mapConcurrently(recent, (m) => postel.outbound.messages.attempts(m.id));
  return trails
    .flat()
    .filter((a) => a.startedAt >= since)
    .sort((a, b) => a.startedAt - b.startedAt)
    .slice(0, limit);
}

/** Stats from the first `SAMPLE` pending and dead-lettered messages and the sampled recent attempts. */
async function interimStats(
  postel: DashboardPostel,
  listMessages: (filter: MessageFilter) => Promise<Page<Message>>,
  attempts: AttemptRecord[],
  at: number,
  windowMs: number,
): Promise<OutboundStats> {
  const [endpoints, pending, dead] = await Promise.all([
    postel.outbound.endpoints.list({ limit: 1000 }),
    listMessages({ status: "pending", limit: SAMPLE }),
    listMessages({ status: "dead-lettered", limit: SAMPLE }),
  ]);
  const [pendingDeliveries, deadDeliveries] = await Promise.all([
    mapConcurrently(pending.items, (m) => postel.outbound.messages.deliveries(m.id)),
    mapConcurrently(dead.items, (m) => postel.outbound.messages.deliveries(m.id)),
  ]);
  const backlog = {
    due: 0,
    oldestDueAt: null as number | null,
    inFlight: 0,
    scheduled: 0,
    held: 0,
    unfanned: 0,
  };
  const perEndpoint = new Map(
    endpoints.map((e) => [
      e.id,
      { due: 0, inFlight: 0, scheduled: 0, held: 0, deadLetters: 0, attempts: 0, failures: 0 },
    ]),
  );
  pending.items.forEach((message, i) => {
    if (message.fannedOutAt === null) backlog.unfanned++;
    for (const d of pendingDeliveries[i]!) {
      const line = perEndpoint.get(d.endpointId);
      const kind = backlogKind(d, at);
      if (kind === null) continue;
      backlog[kind]++;
      if (line) line[kind]++;
      if (kind === "due" && (backlog.oldestDueAt === null || d.nextAttemptAt < backlog.oldestDueAt))
        backlog.oldestDueAt = d.nextAttemptAt;
    }
  });
  let deadLetters = 0;
  for (const d of deadDeliveries.flat()) {
    if (d.status !== "dead-lettered") continue;
    deadLetters++;
    const line = perEndpoint.get(d.endpointId);
    if (line) line.deadLetters++;
  }
  let failures = 0;
  for (const a of attempts) {
    const line = perEndpoint.get(a.endpointId);
    const failed = a.outcome !== "success";
    if (failed) failures++;
    if (line) {
      line.attempts++;
      if (failed) line.failures++;
    }
  }
  return {
    at,
    windowMs,
    backlog,
    deadLetters,
    attempts: { total: attempts.length, failures, failureRate: rate(failures, attempts.length) },
    endpoints: endpoints.map((e) => {
      const line = perEndpoint.get(e.id)!;
      return {
        id: e.id,
        url: e.url,
        description: e.description,
        state: e.state,
        circuitOpenUntil: e.circuitOpenUntil,
        ...line,
        failureRate: rate(line.failures, line.attempts),
      };
    }),
  };
}

function backlogKind(d: DeliveryRecord, at: number): "due" | "inFlight" | "scheduled" | "held" | null {
  if (d.status === "held") return "held";
  if (d.status !== "pending") return null;
  if (d.leaseToken !== null && d.nextAttemptAt > at) return "inFlight";
  return d.nextAttemptAt <= at ? "due" : "scheduled";
}

const rate = (failures: number, total: number) => (total === 0 ? null : failures / total);
