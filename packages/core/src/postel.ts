import { randomUUID } from "node:crypto";
import type { PostelOptions } from "./config/options.js";
import { parsePostelOptions } from "./config/parse.js";
import { Dispatcher, type DrainOptions, type DrainResult } from "./engine/dispatcher.js";
import { EndpointCache } from "./engine/endpoint-cache.js";
import { Emitter, type PostelEventMap, type PostelEventName } from "./engine/events.js";
import { HealthMonitor } from "./engine/health.js";
import { RetentionLoop } from "./engine/retention.js";
import { withDeadline } from "./engine/storage-deadline.js";
import { Wakeups } from "./engine/wakeups.js";
import { type CredentialsApi, createCredentialsApi } from "./credentials/credentials-api.js";
import { warnPlaintextOnce } from "./credentials/plaintext-warning.js";
import { ConfigurationError } from "./errors.js";
import { createHttpSender, type HttpSender } from "./http/http-sender.js";
import { createIdGenerator } from "./ids.js";
import { createEndpointsApi, type EndpointsApi } from "./outbound/endpoints.js";
import { type AttemptsApi, createAttemptsApi } from "./outbound/attempts.js";
import { type AuditLogApi, createAuditLogApi } from "./outbound/audit-log.js";
import { createDeadLettersApi, type DeadLettersApi } from "./outbound/dead-letters.js";
import { createMessagesApi, type MessagesApi } from "./outbound/messages.js";
import { type OutboundStats, type StatsOptions, stats } from "./outbound/stats.js";
import { createOrderingKeysApi, type OrderingKeysApi } from "./outbound/ordering-keys.js";
import { type Timeline, type TimelineOptions, timeline } from "./outbound/timeline.js";
import {
  type ReplayedDelivery,
  type ReplayOptions,
  type ReplaySelection,
  replay,
} from "./outbound/replay.js";
import { type PruneOptions, type PruneResult, prune } from "./outbound/prune.js";
import { send } from "./outbound/send.js";
import { sendBatch } from "./outbound/send-batch.js";
import type { SendEvent, SendResult } from "./outbound/types.js";
import type { AnyEventCatalog, CatalogEvent, EventCatalog } from "./outbound/catalog.js";
import { requireCapability } from "./storage/capabilities.js";
import type { Storage, TransactionOf } from "./storage/storage.js";
import { loadOpenTelemetryApi } from "./telemetry/load-api.js";
import { Telemetry } from "./telemetry/telemetry.js";
import { Receiver } from "@postel/signing/inbound";
import type { InboundSourceOptions } from "@postel/signing/inbound";

/**
 * The event `send()` and `sendBatch()` take: with an event catalog, one of its declared types with
 * `data` its schema accepts (a discriminated union on `type`); without one, any {@link SendEvent}.
 */
export type SendInput<E extends AnyEventCatalog | undefined> = [E] extends [EventCatalog<infer D>]
  ? CatalogEvent<D, Omit<SendEvent, "type" | "data">>
  : SendEvent;

/** The sending side: `postel.outbound`. */
export interface Outbound<S extends Storage<unknown>, E extends AnyEventCatalog | undefined = undefined> {
  /**
   * Enqueues an event: one INSERT, no network I/O. Pass `{ tx }` to commit or roll back with your
   * own transaction.
   * @example
   * await sql.begin(async (tx) => {
   *   await tx`insert into orders ${tx(order)}`;
   *   await postel.outbound.send({ type: "order.created", data: order }, { tx });
   * });
   */
  send(event: SendInput<E>, options?: { tx?: TransactionOf<S> }): Promise<SendResult>;
  /**
   * Enqueues many events at once: each is validated exactly as `send()` validates it (a bad one
   * throws its coded `InvalidInputError`, its message naming the index, e.g. `events[3].type: ...`,
   * and nothing is written), then all are written in a few statements, atomically: in `tx` when
   * given, else in a transaction of their own. Results are in input order; an idempotency key
   * already stored, or repeated earlier in the batch, gives that message's id with `reused: true`.
   * At most `SEND_BATCH_MAX_EVENTS` (10,000) events and `SEND_BATCH_MAX_BYTES` (16 MiB of
   * serialised data) per call, else `BATCH_TOO_LARGE`. An empty array returns `[]`.
   * @example
   * await sql.begin(async (tx) => {
   *   await tx`insert into orders ${tx(orders)}`;
   *   await postel.outbound.sendBatch(
   *     orders.map((order) => ({ type: "order.created", data: order, idempotencyKey: order.id })),
   *     { tx },
   *   );
   * });
   */
  sendBatch(events: readonly SendInput<E>[], options?: { tx?: TransactionOf<S> }): Promise<SendResult[]>;
  endpoints: EndpointsApi;
  messages: MessagesApi;
  /** Dead-lettered deliveries, newest first, paged (the `dead_letter` view as an API). */
  deadLetters: DeadLettersApi;
  /**
   * Permanently failed deliveries (a non-retryable 4xx such as 410, a forbidden address), newest
   * first, paged like `deadLetters`; replay them with `replay({ ..., status: ["failed"] })`.
   */
  failed: DeadLettersApi;
  /** HTTP attempts across every message and instance, oldest first from a time (`postel tail`). */
  attempts: AttemptsApi;
  /**
   * Ordering keys held on endpoints with `onKeyFailure: "hold"` (their heads failed), and `skip` to
   * move one on (`send({ orderingKey })` sets a message's key).
   */
  orderingKeys: OrderingKeysApi;
  /**
   * A snapshot for dashboards and health checks: backlog (due, oldest due, in flight, scheduled,
   * held, not fanned out), dead letters, and per endpoint the same counts with its attempts and
   * failure rate over `window` (default `"1h"`). Cheap beside millions of rows of history.
   * @example
   * const { backlog, attempts } = await postel.outbound.stats({ window: "15m" });
   * const healthy = backlog.oldestDueAt === null || Date.now() - backlog.oldestDueAt < 60_000;
   * console.log(healthy, backlog.due, attempts.failureRate);
   */
  stats(options?: StatsOptions): Promise<OutboundStats>;
  /**
   * Attempts and failures per 10 s over a window (default the last 15 minutes), of every endpoint or
   * one, from the health buckets the workers keep: the live view's charts, exact at any rate.
   * @example
   * const { points } = await postel.outbound.timeline({ window: "15m" });
   * const perSecond = points.map((p) => p.attempts / 10);
   */
  timeline(options?: TimelineOptions): Promise<Timeline>;
  /**
   * Re-enqueues terminal deliveries by message id, endpoint + time range, or predicate, and returns
   * what it re-enqueued. `freshWebhookId` decides whether receivers see the same `webhook-id`;
   * `onProgress` reports long replays chunk by chunk.
   */
  replay(selection: ReplaySelection & ReplayOptions, options?: ReplayOptions): Promise<ReplayedDelivery[]>;
  /**
   * Deletes the finished history older than `olderThan` (default `retention.maxAge`): messages in
   * `dispatched`, `dead-lettered` or `expired` that finished before then, each with all its
   * deliveries and attempts, a batch (one short transaction) at a time, until none is left. Pending
   * messages and anything replayed are never touched. With `retention` configured, `start()`'s
   * workers run this by themselves; call it from a cron when you only `drain()`.
   * @example
   * const { messages, deliveries, attempts } = await postel.outbound.prune({ olderThan: "30d" });
   */
  prune(options?: PruneOptions): Promise<PruneResult>;
  /**
   * The audit log of who did what (portal, dashboard and app actions), kept by the storage's optional
   * `auditLog` capability: every call throws `AUDIT_LOG_UNSUPPORTED` on a storage without it.
   * `prune()` and retention leave it alone; `auditLog.prune()` deletes old entries.
   */
  auditLog: AuditLogApi;
  /**
   * How endpoint credentials are stored (`outbound.credentials`), and `reencrypt()`, which moves
   * every stored one to the primary key: the migration of plain-text rows and the end of a key rotation.
   */
  credentials: CredentialsApi;
  /**
   * The event catalog Postel was configured with (`outbound.events`), null without one: lets a UI
   * list the declared types with their descriptions.
   */
  readonly catalog: AnyEventCatalog | null;
}

/** A Postel instance. */
export interface PostelInstance<
  S extends Storage<unknown>,
  I extends Record<string, InboundSourceOptions<unknown>> = Record<string, InboundSourceOptions<unknown>>,
  E extends AnyEventCatalog | undefined = undefined,
> {
  /** The sending side (throws a `ConfigurationError` when `outbound` was not configured). */
  outbound: Outbound<S, E>;
  /** The receiving side (throws a `ConfigurationError` when `inbound` was not configured). */
  inbound: Receiver<I>;
  /**
   * Migrates storage (when it has migrations) and starts this process's worker pool (and, with
   * `outbound.retention`, its periodic pruning of old finished history).
   */
  start(): Promise<void>;
  /** Stops claiming work and waits for in-flight deliveries to be recorded. */
  stop(): Promise<void>;
  /** One bounded pass over the work due now, for serverless crons and tests (it never prunes). */
  drain(options?: DrainOptions): Promise<DrainResult>;
  /** Subscribes to an event; returns the unsubscribe function. */
  on<E extends PostelEventName>(event: E, listener: (payload: PostelEventMap[E]) => void): () => void;
  /** Stops the workers and closes the HTTP pool and the storage connections Postel opened. */
  close(): Promise<void>;
}

/**
 * Creates a Postel instance. Options are validated up front: one `ConfigurationError` lists every
 * bad field with its path and the fix.
 * @example
 * const postel = Postel({ outbound: { storage: InMemoryStorage() } });
 * await postel.outbound.endpoints.create({ url: "https://example.com/hooks", types: ["order.*"] });
 * await postel.outbound.send({ type: "order.created", data: { id: 1 } });
 * await postel.start();
 */
export function Postel<
  S extends Storage<unknown>,
  I extends Record<string, InboundSourceOptions<unknown>> = Record<string, InboundSourceOptions<unknown>>,
  E extends AnyEventCatalog | undefined = undefined,
>(options: PostelOptions<S, I, E>): PostelInstance<S, I, E> {
  const parsed = parsePostelOptions(options, () => `w_${randomUUID().slice(0, 8)}`);
  const { outbound, clock, random } = parsed;
  // Loaded only when telemetry is on: off, nothing of OpenTelemetry is installed, loaded or called.
  const otel = parsed.telemetry === null ? null : { options: parsed.telemetry, api: loadOpenTelemetryApi() };
  const receiver = options.inbound
    ? Receiver({
        sources: options.inbound,
        clock,
        telemetry: otel === null ? undefined : { ...otel.options, api: otel.api },
      })
    : undefined;
  if (!outbound) return receiverOnly(receiver);
  const events = new Emitter();
  const newId = createIdGenerator(clock);
  // The workers' view of the storage: every call within half a lease (see withDeadline).
  const workerConfig = {
    ...outbound,
    storage: withDeadline(outbound.storage, clock, outbound.workers.leaseDurationMs / 2, () =>
      resetStorage(),
    ),
  };
  // One reset at a time: calls that missed their deadline together replace the connections once.
  let resetting = false;
  const resetStorage = () => {
    if (resetting) return;
    resetting = true;
    void (outbound.storage.reset?.() ?? Promise.resolve())
      .catch((error: unknown) => events.emit("error", { error, context: "replacing storage connections" }))
      .finally(() => {
        resetting = false;
      });
  };
  const cache = new EndpointCache(workerConfig, clock);
  const telemetry =
    otel === null
      ? null
      : new Telemetry(otel.api, otel.options, {
          storage: workerConfig.storage,
          clock,
          events,
          endpoints: () => cache.recent(),
        });
  let http: HttpSender | undefined;
  const httpSender = (): HttpSender => {
    http ??= createHttpSender({
      timeoutMs: outbound.http.timeoutMs,
      connectTimeoutMs: outbound.http.connectTimeoutMs,
      userAgent: outbound.http.userAgent,
      maxResponseBytes: outbound.http.maxResponseBytes,
      networkPolicy: { allowPrivateNetworks: outbound.http.allowPrivateNetworks },
      connectionsPerOrigin: outbound.workers.concurrency.max,
    });
    return http;
  };
  const dispatcher = new Dispatcher({
    config: workerConfig,
    clock,
    random,
    newId,
    cache,
    events,
    health: new HealthMonitor(workerConfig.storage, clock, events, cache),
    get http() {
      return httpSender();
    },
  });
  const retention = outbound.retention
    ? new RetentionLoop(
        // Postel() refused retention on a storage without the capability (see parsePostelOptions).
        {
          storage: requireCapability(workerConfig.storage, "retention", "outbound.retention"),
          clock,
          random,
          events,
        },
        outbound.retention,
      )
    : undefined;
  const wake = () => dispatcher.wake();
  // Deliveries put back in storage due now (a replay, a skipped key, an endpoint enabled): a busy
  // worker's next claim looks for due work too.
  const wakeForDue = () => dispatcher.dueNow();
  const wakeups = new Wakeups({
    storage: outbound.storage,
    clock,
    events,
    wake,
    pollFast: (fast) => dispatcher.pollFast(fast),
  });
  let migrated: Promise<void> | undefined;
  const migrate = () => {
    migrated ??= outbound.storage.migrate?.() ?? Promise.resolve();
    return migrated;
  };

  return {
    get inbound() {
      return receiver ?? notConfigured("inbound", '{ inbound: { billing: { verify: "whsec_..." } } }');
    },
    outbound: {
      send: (event, sendOptions) =>
        send({ config: outbound, clock, newId, wake, telemetry }, event as SendEvent, sendOptions),
      sendBatch: (events, sendOptions) =>
        sendBatch(
          { config: outbound, clock, newId, wake, telemetry },
          events as readonly SendEvent[],
          sendOptions,
        ),
      endpoints: createEndpointsApi({
        config: outbound,
        clock,
        newId,
        changed: () => {
          cache.invalidate();
          dispatcher.dueNow();
        },
        wake,
        telemetry,
      }),
      messages: createMessagesApi(outbound),
      deadLetters: createDeadLettersApi(outbound),
      failed: createDeadLettersApi(outbound, "failed"),
      attempts: createAttemptsApi(outbound, () => clock.now()),
      orderingKeys: createOrderingKeysApi({ config: outbound, clock, wake: wakeForDue }),
      stats: (statsOptions) => stats({ config: outbound, clock }, statsOptions),
      timeline: (timelineOptions) => timeline(outbound, clock.now(), timelineOptions),
      replay: (selection, replayOptions) =>
        replay({ config: outbound, clock, newId, wake: wakeForDue }, selection, replayOptions),
      prune: async (pruneOptions) => {
        await migrate();
        return prune({ config: outbound, clock }, pruneOptions);
      },
      auditLog: createAuditLogApi({ config: outbound, clock, newId }),
      credentials: createCredentialsApi(outbound.credentials),
      catalog: outbound.events,
    },
    async start() {
      if (outbound.credentials.warnPlaintext) warnPlaintextOnce();
      await migrate();
      await wakeups.start();
      dispatcher.start();
      retention?.start();
    },
    async stop() {
      await Promise.all([dispatcher.stop(), retention?.stop()]);
      await wakeups.stop();
    },
    async drain(drainOptions) {
      if (outbound.credentials.warnPlaintext) warnPlaintextOnce();
      await migrate();
      return dispatcher.drain(drainOptions);
    },
    on: (event, listener) => events.on(event, listener),
    async close() {
      await Promise.all([dispatcher.stop(), retention?.stop()]);
      await wakeups.stop();
      await http?.close();
      await outbound.storage.close();
    },
  };
}

function notConfigured(side: "inbound" | "outbound", example: string): never {
  throw new ConfigurationError([{ path: side, message: `is not configured: pass ${example} to Postel()` }]);
}

/** A Postel with only a receiver: every outbound call explains how to configure it. */
function receiverOnly<
  S extends Storage<unknown>,
  I extends Record<string, InboundSourceOptions<unknown>>,
  E extends AnyEventCatalog | undefined,
>(receiver: Receiver<I> | undefined): PostelInstance<S, I, E> {
  const missing = () => notConfigured("outbound", "{ outbound: { storage: InMemoryStorage() } }");
  return {
    get inbound() {
      return receiver ?? notConfigured("inbound", '{ inbound: { billing: { verify: "whsec_..." } } }');
    },
    get outbound(): Outbound<S, E> {
      return missing();
    },
    start: async () => missing(),
    stop: async () => {},
    drain: async () => missing(),
    on: () => missing(),
    close: async () => {},
  };
}
