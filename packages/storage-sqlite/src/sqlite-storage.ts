import type { Client } from "@libsql/client";
import type {
  AuditLogStore,
  BatchSendStore,
  CredentialStore,
  DirectDeliveryStore,
  LimitsStore,
  OperationsStore,
  ReplayStore,
  RetentionStore,
  Storage,
} from "@postel/core/storage";
import { auditStore } from "./audit.js";
import { auditLogStore } from "./audit-log.js";
import { credentialStore } from "./credentials.js";
import { statsStore } from "./stats.js";
import { deliveryQueue } from "./delivery-queue.js";
import { endpointStore } from "./endpoints.js";
import { assertConnection, openConnection, type SqliteConnection } from "./internal/connection.js";
import { outbox } from "./outbox.js";
import { replayStore } from "./replay.js";
import { retentionStore } from "./retention.js";
import type { SqliteTransaction } from "./transaction.js";

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

  const { enqueueMany, renewFanoutLeases, ...outboxVerbs } = outbox(db);
  const { claimLimited, ...queue } = deliveryQueue(db);
  const { listEndpoints, ...endpoints } = endpointStore(db);
  const { getMessage, listDeliveries, ...reads } = auditStore(db);
  return {
    name: "sqlite",
    client,
    ...outboxVerbs,
    ...queue,
    ...endpoints,
    getMessage,
    listDeliveries,
    batchSend: { enqueueMany },
    direct: { renewFanoutLeases },
    limits: { claimLimited },
    operations: { listEndpoints, ...reads, ...statsStore(db) },
    replay: replayStore(db),
    retention: retentionStore(db),
    auditLog: auditLogStore(db),
    credentials: credentialStore(db),
    migrate: lifecycle.migrate,
    close: lifecycle.close,
  };
}
