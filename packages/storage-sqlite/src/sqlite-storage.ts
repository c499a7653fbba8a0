import type { Client } from "@libsql/client";
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
} from "@postel/core/storage";
import { assertConnection, openConnection, type SqliteConnection } from "./internal/connection.js";
import type { SqliteTransaction } from "./internal/transaction.js";
// The delivery part.
import { claims } from "./delivery/claim.js";
import { endpointStore } from "./delivery/endpoints.js";
import { enqueueMessage } from "./delivery/enqueue.js";
import { fanout } from "./delivery/fanout.js";
import { messageReads } from "./delivery/messages.js";
import { recordOutcomes } from "./delivery/record-outcomes.js";
// The capabilities.
import { auditLogStore } from "./audit-log/audit-entries.js";
import { enqueueMany } from "./batch-send/enqueue-many.js";
import { credentialStore } from "./credentials/rewrite-credentials.js";
import { claimLimited } from "./limits/claim-limited.js";
import { attemptsAfter } from "./operations/attempts-after.js";
import { healthBuckets } from "./operations/health-buckets.js";
import { listings } from "./operations/listings.js";
import { recentAttempts } from "./operations/recent-attempts.js";
import { statsStore } from "./operations/stats.js";
import { orderingStore } from "./ordering/held-keys.js";
import { replayStore } from "./replay/replay-deliveries.js";
import { retentionStore } from "./retention/prune.js";

export type { DrizzleSqliteDatabase, SqliteConnection } from "./internal/connection.js";

/** Options of `SqliteStorage()`. */
export interface SqliteStorageOptions {
  /** Apply the shipped migrations on first use (default true). With false, call `migrate()` yourself. */
  migrate?: boolean;
  /**
   * How long a write waits for another connection's write lock before failing with SQLITE_BUSY
   * (default 5000). SQLite's own `busy_timeout` on connections opened from `{ url }` is kept at 25 ms
   * because libsql waits synchronously; the rest is waited asynchronously, without blocking.
   */
  busyTimeoutMs?: number;
  /**
   * SQLite's `synchronous` on Postel's own writes (default `"full"`). `"full"` fsyncs every commit, so
   * a committed `send()` survives power loss; `"normal"` (WAL) fsyncs only at checkpoints: commits cost
   * microseconds instead of an fsync and survive a crash of the process, but the last ones may be lost
   * on power loss. `send(event, { tx })` commits on your connection, with your setting.
   */
  synchronous?: "full" | "normal";
}

/** Postel's `Storage` on SQLite, plus the client it runs on and an explicit `migrate()`. */
export interface SqliteStorage extends Storage<SqliteTransaction> {
  readonly name: "sqlite";
  /** The libsql client in use: yours with `{ client }` / `{ db }`, else the one opened from `url`. */
  readonly client: Client;
  /** Create or upgrade the schema (see the standalone `migrate`). Safe to call from several processes. */
  migrate(): Promise<void>;
  /** `sendBatch()`: multi-row INSERTs in one write transaction. */
  readonly batchSend: BatchSendStore<SqliteTransaction>;
  /** Direct deliveries: a message with one endpoint is written once. */
  readonly direct: DirectDeliveryStore;
  /** Per-endpoint limits across processes (the single writer and a token bucket). */
  readonly limits: LimitsStore;
  /** The operations reads. */
  readonly operations: OperationsStore;
  /** Ordered delivery per key: one delivery of a key per endpoint at a time, in message id order. */
  readonly ordering: OrderingStore;
  /** Replay of terminal deliveries. */
  readonly replay: ReplayStore;
  /** Retention in short write transactions. */
  readonly retention: RetentionStore;
  /** The audit log, in `postel_audit_log`. */
  readonly auditLog: AuditLogStore;
  /** Compare-and-set rewrites of stored credentials (`credentials.reencrypt()`). */
  readonly credentials: CredentialStore;
}

/**
 * Postel's embedded default storage: outbox, delivery queue and audit trail in one SQLite file, in
 * WAL mode, with every claim taken under SQLite's single write lock (`BEGIN IMMEDIATE`).
 * @example
 * const storage = SqliteStorage({ url: "file:postel.db" });
 * const postel = Postel({ outbound: { storage } });
 */
export function SqliteStorage(
  connection: SqliteConnection,
  options: SqliteStorageOptions = {},
): SqliteStorage {
  const { migrate = true, busyTimeoutMs = 5000, synchronous = "full" } = options;
  const settings = { migrate, busyTimeoutMs, synchronous };
  assertConnection(connection, settings, "SqliteStorage");
  const { client, db, ...lifecycle } = openConnection(connection, settings, "SqliteStorage");

  const { renewFanoutLeases, ...fanoutVerbs } = fanout(db);
  const { listEndpoints, ...endpoints } = endpointStore(db);
  return {
    name: "sqlite",
    client,
    enqueue: (message, enqueueOptions) => enqueueMessage(db, message, enqueueOptions?.tx),
    ...fanoutVerbs,
    ...claims(db),
    recordOutcomes: (outcomes, now, next) => recordOutcomes(db, outcomes, now, next),
    ...endpoints,
    ...messageReads(db),
    batchSend: { enqueueMany: (messages, enqueueOptions) => enqueueMany(db, messages, enqueueOptions?.tx) },
    direct: { renewFanoutLeases },
    limits: { claimLimited: (wanted, lease) => claimLimited(db, wanted, lease) },
    operations: {
      listEndpoints,
      ...listings(db),
      // postel_messages_tenant (migration 0008).
      indexedMessageFilters: ["tenantId"],
      recentAttempts: (query) => recentAttempts(db, query),
      attemptsAfter: (query) => attemptsAfter(db, query),
      healthBuckets: (query) => healthBuckets(db, query),
      ...statsStore(db),
    },
    ordering: orderingStore(db),
    replay: replayStore(db),
    retention: retentionStore(db),
    auditLog: auditLogStore(db),
    credentials: credentialStore(db),
    migrate: lifecycle.migrate,
    close: lifecycle.close,
  };
}
