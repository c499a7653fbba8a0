import { MemoryAudit } from "./in-memory/audit.js";
import { memoryAuditLog } from "./in-memory/audit-log.js";
import { memoryCredentials } from "./in-memory/credentials.js";
import { MemoryDeliveryQueue } from "./in-memory/delivery-queue.js";
import { MemoryEndpoints } from "./in-memory/endpoints.js";
import { type InMemoryTransaction, MemoryOutbox } from "./in-memory/outbox.js";
import { MemoryReplay } from "./in-memory/replay.js";
import { memoryOrdering } from "./in-memory/ordering.js";
import { MemoryRetention } from "./in-memory/retention.js";
import { MemoryState } from "./in-memory/state.js";
import { memoryStats } from "./in-memory/stats.js";
import type {
  AuditLogStore,
  BatchSendStore,
  CredentialStore,
  DirectDeliveryStore,
  LimitsStore,
  OperationsStore,
  OrderingStore,
  ReplayStore,
  RetentionStore,
  Storage,
} from "./storage.js";

export type { InMemoryTransaction } from "./in-memory/outbox.js";

/** Options of `InMemoryStorage()`; none yet, reserved so adding one is not a breaking change. */
export type InMemoryStorageOptions = Record<string, never>;

/**
 * Postel's storage in process memory: a complete, concurrency-safe `Storage` for demos, tests and
 * single-process tools. State is lost when the process exits.
 */
export interface InMemoryStorage extends Storage<InMemoryTransaction> {
  readonly name: "memory";
  /** `sendBatch()`, always present in memory. */
  readonly batchSend: BatchSendStore<InMemoryTransaction>;
  /** Direct deliveries, always present in memory. */
  readonly direct: DirectDeliveryStore;
  /** Per-endpoint limits across workers, always present in memory. */
  readonly limits: LimitsStore;
  /** The operations reads, always present in memory. */
  readonly operations: OperationsStore;
  /** Ordered delivery per key. */
  readonly ordering: OrderingStore;
  /** Replay, always present in memory. */
  readonly replay: ReplayStore;
  /** Retention, always present in memory. */
  readonly retention: RetentionStore;
  /** The audit log, always present in memory. */
  readonly auditLog: AuditLogStore;
  /** Credential rewrites (`credentials.reencrypt()`), always present in memory. */
  readonly credentials: CredentialStore;
  /**
   * Run `fn` as a transaction: messages it enqueues with `{ tx }` become visible when `fn` resolves
   * and are discarded when it throws (the error propagates). Stands in for a database transaction.
   */
  transaction<T>(fn: (tx: InMemoryTransaction) => Promise<T>): Promise<T>;
  /** Calls `onWake` whenever an enqueued message becomes visible (on insert or on commit). */
  subscribe(onWake: () => void, onLost?: (error: unknown) => void): Promise<() => Promise<void>>;
}

/**
 * Create an empty in-memory storage. Every operation is atomic (it runs synchronously on the one JS
 * thread) and returns copies, so callers can never change stored state by mutating a result.
 * @example
 * const storage = InMemoryStorage();
 * const postel = Postel({ outbound: { storage } });
 * await storage.transaction(async (tx) => {
 *   await postel.outbound.send({ type: "order.created", data: { id: 1 } }, { tx });
 * });
 */
export function InMemoryStorage(_options: InMemoryStorageOptions = {}): InMemoryStorage {
  const state = new MemoryState();
  const listeners = new Set<() => void>();
  const wake = () => {
    for (const listener of listeners) queueMicrotask(listener);
  };
  const outbox = new MemoryOutbox(state, wake);
  const queue = new MemoryDeliveryQueue(state);
  const endpoints = new MemoryEndpoints(state);
  const audit = new MemoryAudit(state);
  const replay = new MemoryReplay(state);
  const retention = new MemoryRetention(state);

  return {
    name: "memory",
    enqueue: (message, options) => outbox.enqueue(message, options?.tx),
    transaction: (fn) => outbox.transaction(fn),
    claimFanout: (lease) => outbox.claimFanout(lease),
    recordFanout: (results, now, lease) => outbox.recordFanout(results, now, lease),
    claimDue: (lease) => queue.claimDue(lease),
    renewLeases: (leases, until) => queue.renewLeases(leases, until),
    recordOutcomes: (outcomes, now, next) => queue.recordOutcomes(outcomes, now, next),
    releaseHeld: (endpointId, now) => queue.releaseHeld(endpointId, now),
    createEndpoint: (endpoint) => endpoints.createEndpoint(endpoint),
    getEndpoint: (id) => endpoints.getEndpoint(id),
    allEndpoints: () => endpoints.allEndpoints(),
    endpointsRevision: () => endpoints.endpointsRevision(),
    updateEndpoint: (id, fields, now) => endpoints.updateEndpoint(id, fields, now),
    deleteEndpoint: (id, now) => endpoints.deleteEndpoint(id, now),
    transitionEndpoint: (id, expected, next, now) => endpoints.transitionEndpoint(id, expected, next, now),
    addEndpointSecret: (id, secret, previousExpireAt) =>
      endpoints.addEndpointSecret(id, secret, previousExpireAt),
    endpointHealth: (id, since) => endpoints.endpointHealth(id, since),
    getMessage: (id) => audit.getMessage(id),
    listDeliveries: (messageId) => audit.listDeliveries(messageId),
    subscribe: async (onWake) => {
      listeners.add(onWake);
      return async () => {
        listeners.delete(onWake);
      };
    },
    close: async () => {},

    batchSend: { enqueueMany: (messages, options) => outbox.enqueueMany(messages, options?.tx) },
    direct: { renewFanoutLeases: (leases, until) => outbox.renewFanoutLeases(leases, until) },
    limits: { claimLimited: (claims, lease) => queue.claimLimited(claims, lease) },
    operations: {
      listEndpoints: (query) => endpoints.listEndpoints(query),
      listMessages: (query) => audit.listMessages(query),
      messageWindow: (after, size) => audit.messageWindow(after, size),
      indexedMessageFilters: ["tenantId"],
      listAttempts: (messageId) => audit.listAttempts(messageId),
      listDeadLetters: (query) => audit.listDeadLetters(query),
      recentAttempts: (query) => audit.recentAttempts(query),
      attemptsAfter: (query) => audit.attemptsAfter(query),
      healthBuckets: async (query) => state.healthBuckets(query),
      stats: async (query) => memoryStats(state, query),
    },
    ordering: memoryOrdering(state),
    replay: {
      findReplayable: (selector, limit) => replay.findReplayable(selector, limit),
      resetDeliveries: (resets, now) => replay.resetDeliveries(resets, now),
    },
    retention: {
      pruneFinished: (request) => retention.pruneFinished(request),
      pruneHealth: async (request) => retention.pruneHealth(request),
    },
    auditLog: memoryAuditLog(state),
    credentials: memoryCredentials(state),
  };
}
