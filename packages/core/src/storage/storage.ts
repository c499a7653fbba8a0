import type { AuditLogStore } from "./audit-log-store.js";
import type { BatchSendStore } from "./batch-send-store.js";
import type { CredentialStore } from "./credentials-store.js";
import type { DeliveryStorage } from "./delivery-storage.js";
import type { DirectDeliveryStore } from "./direct-store.js";
import type { LimitsStore } from "./limits-store.js";
import type { OperationsStore } from "./operations-store.js";
import type { OrderingStore } from "./ordering-store.js";
import type { ReplayStore } from "./replay-store.js";
import type { RetentionStore } from "./retention-store.js";

export * from "./audit-log-store.js";
export type * from "./batch-send-store.js";
export type * from "./credentials-store.js";
export * from "./delivery-storage.js";
export * from "./direct-store.js";
export * from "./limits-store.js";
export * from "./operations-store.js";
export * from "./ordering-store.js";
export type * from "./replay-store.js";
export type * from "./retention-store.js";

/**
 * The optional capabilities a storage may have, each a named interface that the features needing it
 * take. `Postel()` checks once which ones a storage has (each one whole: every verb a function);
 * a feature used without its capability throws a coded error naming it (`REPLAY_UNSUPPORTED`, ...).
 */
export interface StorageCapabilities<Tx = never> {
  /** `sendBatch()`: many messages in one atomic write (`BATCH_SEND_UNSUPPORTED` without it). */
  readonly batchSend?: BatchSendStore<Tx>;
  /** Direct deliveries: a message with one endpoint is written once (a speed-up; nothing needs it). */
  readonly direct?: DirectDeliveryStore;
  /** Endpoints with `maxInFlight` or `rateLimit` (`LIMITS_UNSUPPORTED` without it). */
  readonly limits?: LimitsStore;
  /**
   * Listings, the attempt feed, health series and `stats()`: the operations API, the dashboard, the
   * CLI and the portal (`OPERATIONS_UNSUPPORTED` without it).
   */
  readonly operations?: OperationsStore;
  /**
   * Ordered delivery per key: `send({ orderingKey })` and the held-key operations
   * (`ORDERING_UNSUPPORTED` without it). Its presence says the delivery verbs keep `ORDERING_RULES`.
   */
  readonly ordering?: OrderingStore;
  /** `replay()` and the dead-letter replays (`REPLAY_UNSUPPORTED` without it). */
  readonly replay?: ReplayStore;
  /** `prune()` and the workers' `outbound.retention` (`RETENTION_UNSUPPORTED` without it). */
  readonly retention?: RetentionStore;
  /**
   * The audit log: `postel.outbound.auditLog` and the customer portal (its action log, one-time
   * sign-in links and per-tenant rate limits) (`AUDIT_LOG_UNSUPPORTED` without it).
   */
  readonly auditLog?: AuditLogStore;
  /**
   * Compare-and-set rewrites of stored credentials: `postel.outbound.credentials.reencrypt()`
   * (`CREDENTIAL_REWRITE_UNSUPPORTED` without it).
   */
  readonly credentials?: CredentialStore;
}

/**
 * Everything Postel can use from a database: the required delivery part (`DeliveryStorage`, what
 * sending and delivering need) and optional capabilities (`StorageCapabilities`), each a named
 * interface. Implementations: `InMemoryStorage` (core), `@postel/storage-postgres`,
 * `@postel/storage-sqlite`. Write one against `@postel/core/storage` and prove it with
 * `runStorageConformance` from `@postel/core/storage/conformance`.
 */
export interface Storage<Tx = never> extends DeliveryStorage<Tx>, StorageCapabilities<Tx> {}

/** The transaction handle type of a storage (what `send(event, { tx })` accepts). */
export type TransactionOf<S> = S extends DeliveryStorage<infer Tx> ? Tx : never;
