import {
  type AuditLogStore,
  type BatchSendStore,
  type ConfigurationIssue,
  type CredentialStore,
  type DirectDeliveryStore,
  InvalidInputError,
  type LimitsStore,
  type OperationsStore,
  type OrderingStore,
  type ReplayStore,
  type RetentionStore,
  type Storage,
  StorageUnavailableError,
} from "@postel/core/storage";
import postgres, { type Sql } from "postgres";
import {
  isPostgresUrl,
  type PostgresConnection,
  type PostgresTransaction,
  resolveConnection,
} from "./internal/connection.js";
import { asConnectionError, isSessionLost } from "./internal/connection-errors.js";
import { ClaimFloor } from "./internal/claim-floor.js";
import { hidingSecrets } from "./internal/hide-secrets.js";
import { ownedPool, sharedPool } from "./internal/query-pool.js";
import { epochMs } from "./internal/rows.js";
import { asSchemaError } from "./internal/schema-errors.js";
import { listenForWakeups, type WakeListener } from "./internal/wake-listener.js";
import { assertMigrated, migrate } from "./migrate.js";
// The delivery part.
import * as claim from "./delivery/claim.js";
import * as endpointState from "./delivery/endpoint-state.js";
import * as endpoints from "./delivery/endpoints.js";
import { WAKE_CHANNEL, enqueue } from "./delivery/enqueue.js";
import { createEnqueueBatcher } from "./delivery/enqueue-batch.js";
import * as fanout from "./delivery/fanout.js";
import * as messages from "./delivery/messages.js";
import { recordOutcomes } from "./delivery/record-outcomes.js";
// The capabilities.
import * as auditLog from "./audit-log/audit-entries.js";
import { enqueueMany } from "./batch-send/enqueue-many.js";
import { rewriteCredentials } from "./credentials/rewrite-credentials.js";
import { claimLimited } from "./limits/claim-limited.js";
import { attemptsAfter } from "./operations/attempts-after.js";
import { healthBuckets } from "./operations/health-buckets.js";
import * as listings from "./operations/listings.js";
import { recentAttempts } from "./operations/recent-attempts.js";
import { stats } from "./operations/stats.js";
import * as ordering from "./ordering/held-keys.js";
import * as replay from "./replay/replay-deliveries.js";
import { pruneFinished, pruneHealth } from "./retention/prune.js";

/** Options of `PostgresStorage` beyond the connection. */
export interface PostgresStorageOptions {
  /** Apply the shipped migrations on first use (default true). With false, first use only checks them. */
  migrate?: boolean;
  /**
   * Named prepared statements on the pool Postel opens from `url` (default true). Set false behind a
   * transaction pooler that does not keep them (PgBouncer's `pool_mode = transaction` before 1.21).
   * With `sql` or `db`, make your pool with postgres.js's own `prepare: false` instead.
   */
  prepare?: boolean;
  /**
   * Where workers LISTEN for other instances' wake-ups: `true` (default) on the storage's pool;
   * `{ url }` on a connection of its own to that URL (the database server itself, when the pool goes
   * through a transaction pooler, which cannot pass LISTEN); `false` nowhere, and workers find other
   * instances' messages by polling, every `workers.pollInterval`.
   */
  listen?: boolean | { url: string };
}

/** Postel's `Storage` on Postgres; `migrate()` is always present. */
export interface PostgresStorageInstance extends Storage<PostgresTransaction> {
  migrate(): Promise<void>;
  /** `sendBatch()`: multi-row INSERTs in one transaction. */
  readonly batchSend: BatchSendStore<PostgresTransaction>;
  /** Direct deliveries: a message with one endpoint is written once. */
  readonly direct: DirectDeliveryStore;
  /** Per-endpoint limits across workers (an advisory lock per endpoint and a token bucket). */
  readonly limits: LimitsStore;
  /** The operations reads, from partial indexes and health buckets. */
  readonly operations: OperationsStore;
  /** Ordered delivery per key: advisory locks per key, waiting deliveries, held keys. */
  readonly ordering: OrderingStore;
  /** Replay of terminal deliveries. */
  readonly replay: ReplayStore;
  /** Retention in short batches (`FOR UPDATE SKIP LOCKED`). */
  readonly retention: RetentionStore;
  /** The audit log, in `postel.audit_log`. */
  readonly auditLog: AuditLogStore;
  /** Compare-and-set rewrites of stored credentials (`credentials.reencrypt()`). */
  readonly credentials: CredentialStore;
}

/**
 * Postel's storage on PostgreSQL (postgres.js, optionally through drizzle). Give it a connection
 * string (Postel opens and closes its own pool) or your app's `sql` / drizzle `db` (shared, never
 * closed by Postel). `send(event, { tx })` joins a transaction of postgres.js (`sql.begin`), drizzle
 * (on postgres.js or node-postgres), node-postgres (a client after `BEGIN`), Prisma (`$transaction`)
 * or Kysely (`db.transaction()`).
 *
 * @example
 * const storage = PostgresStorage({ url: process.env.DATABASE_URL! });
 * const postel = Postel({ outbound: { storage } });
 * await sql.begin(async (tx) => {
 *   await tx`INSERT INTO orders ${tx(order)}`;
 *   await postel.outbound.send({ type: "order.created", data: order }, { tx });
 * });
 */
export function PostgresStorage(
  connection: PostgresConnection,
  options: PostgresStorageOptions = {},
): PostgresStorageInstance {
  const { sql: first, owned } = resolveConnection(
    connection,
    "PostgresStorage",
    optionIssues(options, connection),
    options.prepare === undefined ? {} : { prepare: options.prepare },
  );
  const pool = owned ? ownedPool(first) : sharedPool(first);
  // What LISTEN connections are opened like: the storage's own pool, or `listen.url`'s.
  let listenUrlPool: Sql | undefined;
  const listenLike = (): Sql | undefined => {
    const { listen = true } = options;
    if (listen === false) return undefined;
    if (listen === true) return pool.sql;
    // Never queried: only its parsed options are used, for the listening connections.
    listenUrlPool ??= postgres(listen.url, { max: 1, onnotice: () => {} });
    return listenUrlPool;
  };
  const listeners = new Set<WakeListener>();
  let ready: Promise<void> | undefined;

  const migrateNow = () => migrate(pool.sql);
  // send() without a transaction: concurrent calls share one INSERT and one commit.
  const enqueueBatched = createEnqueueBatcher(pool, (message) =>
    pool.run((sql) => enqueue(sql, message, undefined)),
  );
  // Migrate (or check) once, on first use; a failure is retried by the next call.
  const ensureReady = (): Promise<void> => {
    ready ??= (options.migrate === false ? assertMigrated(pool.sql) : migrateNow()).catch(
      (error: unknown) => {
        ready = undefined;
        throw error;
      },
    );
    return ready;
  };
  // Where this instance's next claims start scanning (see ClaimFloor).
  const fanoutFloor = new ClaimFloor();
  const dueFloor = new ClaimFloor();
  // Every storage call: schema and connection failures become Postel errors that name the fix.
  const guarded = async <T>(query: () => Promise<T>): Promise<T> => {
    try {
      await ensureReady();
      return await query();
    } catch (error) {
      throw asConnectionError(asSchemaError(error), pool.sql);
    }
  };
  // ... on the current pool, failing at once if that pool is replaced meanwhile (see QueryPool).
  const run = <T>(query: (sql: Sql) => Promise<T>): Promise<T> => guarded(() => pool.run(query));

  return {
    name: "postgres",
    migrate: async () => {
      await migrateNow(); // migrate() names connection failures itself
      ready = Promise.resolve();
    },

    // Not on `run`: the batcher runs its own inserts on the pool, resolving a commit a lost session
    // left unknown; in the app's transaction, the app's connection is the app's.
    enqueue: (message, enqueueOptions) =>
      guarded(async () => {
        try {
          const tx = enqueueOptions?.tx;
          return await (tx === undefined ? enqueueBatched(message) : enqueue(pool.sql, message, tx));
        } catch (error) {
          throw duplicateIdError(error, message.id);
        }
      }),
    claimFanout: (lease) => run((sql) => fanout.claimFanout(sql, timed(lease), fanoutFloor)),
    recordFanout: (results, now, lease) =>
      run((sql) =>
        fanout.recordFanout(sql, results, epochMs(now), lease && { ...lease, until: epochMs(lease.until) }),
      ),

    claimDue: (lease) => run((sql) => claim.claimDue(sql, timed(lease), dueFloor)),
    renewLeases: (leases, until) => run((sql) => claim.renewLeases(sql, leases, epochMs(until))),
    recordOutcomes: (outcomes, now, next) =>
      run((sql) =>
        recordOutcomes(
          sql,
          outcomes,
          epochMs(now),
          next === undefined ? undefined : { owner: next.owner, until: epochMs(next.until) },
        ),
      ),
    releaseHeld: (endpointId, now) => run((sql) => claim.releaseHeld(sql, endpointId, epochMs(now))),

    // Endpoint writes carry signing secrets: their errors never do (see hide-secrets.ts).
    createEndpoint: (endpoint) =>
      run((sql) =>
        hidingSecrets(
          endpoints.createEndpoint(sql, endpoint),
          endpoint.secrets.map((s) => s.secret),
        ),
      ),
    getEndpoint: (id) => run((sql) => endpoints.getEndpoint(sql, id)),
    allEndpoints: () => run((sql) => endpoints.allEndpoints(sql)),
    endpointsRevision: () => run((sql) => endpoints.endpointsRevision(sql)),
    updateEndpoint: (id, fields, now) =>
      run((sql) => hidingSecrets(endpoints.updateEndpoint(sql, id, fields, epochMs(now)), [])),
    deleteEndpoint: (id, now) => run((sql) => endpointState.deleteEndpoint(sql, id, epochMs(now))),
    transitionEndpoint: (id, expected, next, now) =>
      run((sql) => endpointState.transitionEndpoint(sql, id, expected, next, epochMs(now))),
    addEndpointSecret: (id, secret, previousExpireAt) =>
      run((sql) =>
        hidingSecrets(endpointState.addEndpointSecret(sql, id, secret, epochMs(previousExpireAt)), [
          secret.secret,
        ]),
      ),
    endpointHealth: (id, since) => run((sql) => endpointState.endpointHealth(sql, id, epochMs(since))),

    getMessage: (id) => run((sql) => messages.getMessage(sql, id)),
    listDeliveries: (messageId) => run((sql) => messages.listDeliveries(sql, messageId)),

    batchSend: {
      enqueueMany: (messages, enqueueOptions) =>
        run(async (sql) => {
          try {
            return await enqueueMany(sql, messages, enqueueOptions?.tx);
          } catch (error) {
            // Its own transaction's session lost: it may have committed (inside the app's, the app's
            // transaction fails and says so).
            if (enqueueOptions?.tx === undefined && isSessionLost(error)) throw unknownBatchCommit(error);
            throw duplicateIdError(error);
          }
        }),
    },
    direct: {
      renewFanoutLeases: (leases, until) =>
        run((sql) => fanout.renewFanoutLeases(sql, leases, epochMs(until))),
    },
    limits: {
      claimLimited: (claims, lease) => run((sql) => claimLimited(sql, claims, timed(lease))),
    },
    operations: {
      listEndpoints: (query) => run((sql) => endpoints.listEndpoints(sql, query)),
      listMessages: (query) => run((sql) => listings.listMessages(sql, query)),
      messageWindow: (after, size) => run((sql) => listings.messageWindow(sql, after, size)),
      // messages_tenant_idx (migration 0012).
      indexedMessageFilters: ["tenantId"],
      listAttempts: (messageId) => run((sql) => listings.listAttempts(sql, messageId)),
      listDeadLetters: (query) => run((sql) => listings.listDeadLetters(sql, query)),
      recentAttempts: (query) => run((sql) => recentAttempts(sql, query)),
      attemptsAfter: (query) => run((sql) => attemptsAfter(sql, query)),
      healthBuckets: (query) => run((sql) => healthBuckets(sql, query)),
      stats: (query) => run((sql) => stats(sql, query)),
    },
    ordering: {
      listHeldKeys: (query) => run((sql) => ordering.listHeldKeys(sql, query)),
      skipHeldKey: (endpointId, orderingKey, now) =>
        run((sql) => ordering.skipHeldKey(sql, endpointId, orderingKey, epochMs(now))),
      countWaiting: (query) => run((sql) => ordering.countWaiting(sql, query)),
    },
    replay: {
      findReplayable: (selector, limit) => run((sql) => replay.findReplayable(sql, selector, limit)),
      resetDeliveries: (resets, now) => run((sql) => replay.resetDeliveries(sql, resets, epochMs(now))),
    },
    retention: {
      pruneFinished: (request) =>
        run((sql) => pruneFinished(sql, { ...request, finishedBefore: epochMs(request.finishedBefore) })),
      pruneHealth: (request) =>
        run((sql) => pruneHealth(sql, { ...request, startedBefore: epochMs(request.startedBefore) })),
    },

    auditLog: {
      appendAuditEntry: (entry) =>
        run(async (sql) => {
          try {
            return await auditLog.appendAuditEntry(sql, entry);
          } catch (error) {
            throw duplicateAuditIdError(error, entry.id);
          }
        }),
      listAuditEntries: (query) => run((sql) => auditLog.listAuditEntries(sql, query)),
      countAuditEntries: (query) => run((sql) => auditLog.countAuditEntries(sql, query)),
      pruneAuditEntries: (request) => run((sql) => auditLog.pruneAuditEntries(sql, request)),
    },

    credentials: {
      rewriteCredentials: (id, expected, next) =>
        run((sql) =>
          hidingSecrets(rewriteCredentials(sql, id, expected, next), [...next.secrets, ...expected.secrets]),
        ),
    },

    subscribe: async (onWake, onLost) => {
      const like = listenLike();
      if (like === undefined) return async () => {};
      const listener = listenForWakeups(like, WAKE_CHANNEL, onWake, (error) => {
        listeners.delete(listener);
        onLost?.(error);
      });
      listeners.add(listener);
      try {
        await listener.ready;
      } catch (error) {
        listeners.delete(listener);
        throw error;
      }
      return async () => {
        if (listeners.delete(listener)) await listener.stop();
      };
    },
    reset: () => pool.replace(),
    close: async () => {
      await Promise.all([...listeners].map((listener) => listener.stop()));
      listeners.clear();
      await listenUrlPool?.end({ timeout: 0 });
      await pool.end();
    },
  };
}

function optionIssues(options: PostgresStorageOptions, connection: PostgresConnection): ConfigurationIssue[] {
  if (typeof options !== "object" || options === null) {
    return [{ path: "", message: "the second argument must be an options object, e.g. { migrate: false }" }];
  }
  const issues: ConfigurationIssue[] = [];
  if (options.migrate !== undefined && typeof options.migrate !== "boolean") {
    issues.push({ path: "migrate", message: "must be true (the default: migrate on first use) or false" });
  }
  if (options.prepare !== undefined) {
    if (typeof options.prepare !== "boolean") {
      issues.push({
        path: "prepare",
        message: "must be true (the default) or false (behind a transaction pooler)",
      });
    } else if (typeof connection === "object" && connection !== null && !("url" in connection)) {
      issues.push({
        path: "prepare",
        message:
          "applies to the pool Postel opens from `url`; for your own pool, create it with " +
          "postgres(url, { prepare: false })",
      });
    }
  }
  const { listen } = options;
  if (listen !== undefined && typeof listen !== "boolean") {
    const url = (listen as { url?: unknown } | null)?.url;
    if (!isPostgresUrl(url)) {
      issues.push({
        path: "listen",
        message:
          "must be true (LISTEN on the storage's pool), false (poll only) or { url } with a postgres:// " +
          'URL of the server itself, e.g. { url: "postgres://user:password@db:5432/app" }',
      });
    }
  }
  return issues;
}

function timed<L extends { now: number; until: number }>(lease: L): L {
  return { ...lease, now: epochMs(lease.now), until: epochMs(lease.until) };
}

function unknownBatchCommit(error: unknown): StorageUnavailableError {
  return new StorageUnavailableError(
    "The connection to PostgreSQL was lost while sendBatch() stored its events: the batch (one " +
      "transaction) may or may not have been stored. Send it again with an idempotencyKey on every " +
      "event (the same keys both times), so that a second send cannot store any of them twice.",
    { cause: error, ambiguous: true },
  );
}

// A second message with an id already used is bad input, as in InMemoryStorage. In a batch the id is
// the one Postgres names in the error's detail ("Key (id)=(msg_…) already exists.").
function duplicateIdError(error: unknown, id?: string): unknown {
  const pg = error as { code?: unknown; constraint_name?: unknown; detail?: unknown } | null;
  if (pg?.code !== "23505" || pg.constraint_name !== "messages_pkey") return error;
  const named = id ?? /\(id\)=\((.*)\)/.exec(typeof pg.detail === "string" ? pg.detail : "")?.[1];
  const which = named === undefined ? "this id" : `id "${named}"`;
  return new InvalidInputError("INVALID_ARGUMENT", `A message with ${which} already exists.`, {
    cause: error,
  });
}

// As in InMemoryStorage: an audit entry id already stored is bad input (core never makes one twice).
function duplicateAuditIdError(error: unknown, id: string): unknown {
  const pg = error as { code?: unknown; constraint_name?: unknown } | null;
  if (pg?.code !== "23505" || pg.constraint_name !== "audit_log_pkey") return error;
  return new InvalidInputError("INVALID_ARGUMENT", `An audit entry with id "${id}" already exists.`, {
    cause: error,
  });
}
