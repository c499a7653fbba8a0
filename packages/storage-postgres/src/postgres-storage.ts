import { type ConfigurationIssue, InvalidInputError, type Storage } from "@postel/core";
import postgres, { type Sql } from "postgres";
import {
  isPostgresUrl,
  type PostgresConnection,
  type PostgresTransaction,
  resolveConnection,
} from "./internal/connection.js";
import { asConnectionError } from "./internal/connection-errors.js";
import { hidingSecrets } from "./internal/hide-secrets.js";
import { epochMs } from "./internal/rows.js";
import { asSchemaError } from "./internal/schema-errors.js";
import { assertMigrated, migrate } from "./migrate.js";
import * as audit from "./queries/audit.js";
import * as claim from "./queries/claim.js";
import { claimLimited } from "./queries/claim-limited.js";
import * as endpointState from "./queries/endpoint-state.js";
import * as endpoints from "./queries/endpoints.js";
import { WAKE_CHANNEL, enqueue } from "./queries/enqueue.js";
import { createEnqueueBatcher } from "./queries/enqueue-batch.js";
import { enqueueMany } from "./queries/enqueue-many.js";
import { ClaimFloor } from "./internal/claim-floor.js";
import * as fanout from "./queries/fanout.js";
import { recentAttempts } from "./queries/recent-attempts.js";
import { recordOutcomes } from "./queries/record-outcomes.js";
import { pruneFinished, pruneHealth } from "./queries/prune.js";
import { stats } from "./queries/stats.js";
import * as replay from "./queries/replay.js";

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
  const { sql, owned } = resolveConnection(
    connection,
    "PostgresStorage",
    optionIssues(options, connection),
    options.prepare === undefined ? {} : { prepare: options.prepare },
  );
  // The pool LISTEN runs on: the storage's own, or one connection to `listen.url`, opened on first use.
  let listenPool: Sql | undefined;
  const listenSql = (): Sql | undefined => {
    const { listen = true } = options;
    if (listen === false) return undefined;
    if (listen === true) return sql;
    listenPool ??= postgres(listen.url, { max: 1, onnotice: () => {} });
    return listenPool;
  };
  const listeners = new Set<() => Promise<void>>();
  let ready: Promise<void> | undefined;

  const migrateNow = () => migrate(sql);
  // send() without a transaction: concurrent calls share one INSERT and one commit.
  const enqueueBatched = createEnqueueBatcher(sql, (message) => enqueue(sql, message, undefined));
  // Migrate (or check) once, on first use; a failure is retried by the next call.
  const ensureReady = (): Promise<void> => {
    ready ??= (options.migrate === false ? assertMigrated(sql) : migrateNow()).catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  };
  // Where this instance's next claims start scanning (see ClaimFloor).
  const fanoutFloor = new ClaimFloor();
  const dueFloor = new ClaimFloor();
  // Every storage call: schema and connection failures become Postel errors that name the fix.
  const run = async <T>(query: () => Promise<T>): Promise<T> => {
    try {
      await ensureReady();
      return await query();
    } catch (error) {
      throw asConnectionError(asSchemaError(error), sql);
    }
  };

  return {
    name: "postgres",
    migrate: async () => {
      await migrateNow(); // migrate() names connection failures itself
      ready = Promise.resolve();
    },

    enqueue: (message, enqueueOptions) =>
      run(async () => {
        try {
          const tx = enqueueOptions?.tx;
          return await (tx === undefined ? enqueueBatched(message) : enqueue(sql, message, tx));
        } catch (error) {
          throw duplicateIdError(error, message.id);
        }
      }),
    enqueueMany: (messages, enqueueOptions) =>
      run(async () => {
        try {
          return await enqueueMany(sql, messages, enqueueOptions?.tx);
        } catch (error) {
          throw duplicateIdError(error);
        }
      }),
    claimFanout: (lease) => run(() => fanout.claimFanout(sql, timed(lease), fanoutFloor)),
    recordFanout: (results, now, lease) =>
      run(() =>
        fanout.recordFanout(sql, results, epochMs(now), lease && { ...lease, until: epochMs(lease.until) }),
      ),

    renewFanoutLeases: (leases, until) => run(() => fanout.renewFanoutLeases(sql, leases, epochMs(until))),

    claimDue: (lease) => run(() => claim.claimDue(sql, timed(lease), dueFloor)),
    claimLimited: (claims, lease) => run(() => claimLimited(sql, claims, timed(lease))),
    renewLeases: (leases, until) => run(() => claim.renewLeases(sql, leases, epochMs(until))),
    recordOutcomes: (outcomes, now) => run(() => recordOutcomes(sql, outcomes, epochMs(now))),
    releaseHeld: (endpointId, now) => run(() => claim.releaseHeld(sql, endpointId, epochMs(now))),

    // Endpoint writes carry signing secrets: their errors never do (see hide-secrets.ts).
    createEndpoint: (endpoint) =>
      run(() =>
        hidingSecrets(
          endpoints.createEndpoint(sql, endpoint),
          endpoint.secrets.map((s) => s.secret),
        ),
      ),
    getEndpoint: (id) => run(() => endpoints.getEndpoint(sql, id)),
    listEndpoints: (query) => run(() => endpoints.listEndpoints(sql, query)),
    allEndpoints: () => run(() => endpoints.allEndpoints(sql)),
    endpointsRevision: () => run(() => endpoints.endpointsRevision(sql)),
    updateEndpoint: (id, fields, now) =>
      run(() => hidingSecrets(endpoints.updateEndpoint(sql, id, fields, epochMs(now)), [])),
    deleteEndpoint: (id, now) => run(() => endpointState.deleteEndpoint(sql, id, epochMs(now))),
    transitionEndpoint: (id, expected, next, now) =>
      run(() => endpointState.transitionEndpoint(sql, id, expected, next, epochMs(now))),
    addEndpointSecret: (id, secret, previousExpireAt) =>
      run(() =>
        hidingSecrets(endpointState.addEndpointSecret(sql, id, secret, epochMs(previousExpireAt)), [
          secret.secret,
        ]),
      ),
    endpointHealth: (id, since) => run(() => endpointState.endpointHealth(sql, id, epochMs(since))),

    getMessage: (id) => run(() => audit.getMessage(sql, id)),
    listMessages: (query) => run(() => audit.listMessages(sql, query)),
    messageWindow: (after, size) => run(() => audit.messageWindow(sql, after, size)),
    listDeliveries: (messageId) => run(() => audit.listDeliveries(sql, messageId)),
    listAttempts: (messageId) => run(() => audit.listAttempts(sql, messageId)),
    listDeadLetters: (query) => run(() => audit.listDeadLetters(sql, query)),
    recentAttempts: (query) => run(() => recentAttempts(sql, query)),
    stats: (query) => run(() => stats(sql, query)),
    countDeliveries: (endpointId) => run(() => audit.countDeliveries(sql, endpointId)),

    findReplayable: (selector, limit) => run(() => replay.findReplayable(sql, selector, limit)),
    resetDeliveries: (resets, now) => run(() => replay.resetDeliveries(sql, resets, epochMs(now))),
    pruneFinished: (request) =>
      run(() => pruneFinished(sql, { ...request, finishedBefore: epochMs(request.finishedBefore) })),
    pruneHealth: (request) =>
      run(() => pruneHealth(sql, { ...request, startedBefore: epochMs(request.startedBefore) })),

    // postgres.js keeps one dedicated LISTEN connection per pool and re-listens after reconnecting.
    subscribe: async (onWake) => {
      const listener = listenSql();
      if (listener === undefined) return async () => {};
      const { unlisten } = await listener
        .listen(WAKE_CHANNEL, () => onWake())
        .catch((error: unknown) => {
          throw asConnectionError(error, listener);
        });
      const stop = async () => {
        if (listeners.delete(stop)) await unlisten();
      };
      listeners.add(stop);
      return stop;
    },
    close: async () => {
      await Promise.all([...listeners].map((stop) => stop()));
      await listenPool?.end({ timeout: 5 });
      if (owned) await sql.end({ timeout: 5 });
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
