import { statement as sql } from "@postel/core/storage";
import { type ClaimResult, type DedupKey, type DedupStore, expirySweeper } from "@postel/core/inbound";
import { assertConnection, openConnection, type SqliteConnection } from "./internal/connection.js";
import { rowsOn, type SqliteTransaction, toStatement } from "./internal/transaction.js";

/** Options of `SqliteDedupStore()`. */
export interface SqliteDedupStoreOptions {
  /** Apply the shipped migrations on first use (default true), as `SqliteStorage` does. */
  migrate?: boolean;
  /** How long a write waits for another connection's write lock (default 5000), as in `SqliteStorage`. */
  busyTimeoutMs?: number;
  /** SQLite's `synchronous` on its writes (default `"full"`), as in `SqliteStorage`. */
  synchronous?: "full" | "normal";
}

/** A `DedupStore` on SQLite that can also mark a webhook handled inside your transaction. */
export interface SqliteDedupStore extends DedupStore {
  /**
   * Mark the webhook handled until `expiresAt`. With `tx` (a libsql or drizzle write transaction) the
   * record commits or rolls back with the handler's own writes; rolled back, it stays "processing".
   */
  complete(
    key: DedupKey,
    now: number,
    expiresAt: number,
    options?: { tx?: SqliteTransaction },
  ): Promise<void>;
  /** Create or upgrade Postel's schema now (otherwise the first call does it). */
  migrate(): Promise<void>;
  /** Close the connection it opened from `{ url }`; a client or drizzle database you passed stays open. */
  close(): Promise<void>;
}

/**
 * Inbound dedup on SQLite (`postel_received`): a claim is one upsert under SQLite's single write lock,
 * so of N concurrent claims of one `webhook-id` (from any process sharing the file) exactly one
 * wins; an expired record is taken over in the same statement. Claims also sweep expired records
 * away (at most once a minute, in the background), so the table holds only the live window.
 * @example
 * const receiver = Receiver({
 *   sources: { billing: { verify: secret, dedup: SqliteDedupStore({ url: "file:postel.db" }) } },
 * });
 */
export function SqliteDedupStore(
  connection: SqliteConnection,
  options: SqliteDedupStoreOptions = {},
): SqliteDedupStore {
  const { migrate = true, busyTimeoutMs = 5000, synchronous = "full" } = options;
  const settings = { migrate, busyTimeoutMs, synchronous };
  assertConnection(connection, settings, "SqliteDedupStore");
  const { db, ...lifecycle } = openConnection(connection, settings, "SqliteDedupStore");
  // Expired records are dead weight (a claim takes one over like a missing one): a sweep on use
  // deletes them a batch (one short write transaction) at a time, at most once a minute.
  const sweeper = expirySweeper(async (now, batch) => {
    const [gone] = await db.write([
      {
        sql: `DELETE FROM postel_received WHERE rowid IN (
          SELECT rowid FROM postel_received WHERE expires_at <= :now ORDER BY expires_at LIMIT :batch)`,
        args: { now, batch },
      },
    ]);
    return gone?.rowsAffected ?? 0;
  });

  return {
    async claim(key, now, processingUntil): Promise<ClaimResult> {
      sweeper.maybeSweep(now);
      // One write transaction: the upsert and the read see the same state, so a record released or
      // taken over by another process in between cannot be misread.
      const [claimed, existing] = await db.write([
        {
          sql: `INSERT INTO postel_received (source, id, status, received_at, expires_at)
            VALUES (:source, :id, 'processing', :now, :until)
            ON CONFLICT (source, id) DO UPDATE
              SET status = 'processing', received_at = excluded.received_at, expires_at = excluded.expires_at
              WHERE postel_received.expires_at <= :now
            RETURNING 1`,
          args: { source: key.source, id: key.id, now, until: processingUntil },
        },
        {
          sql: "SELECT status FROM postel_received WHERE source = :source AND id = :id",
          args: { source: key.source, id: key.id },
        },
      ]);
      if ((claimed?.rows.length ?? 0) > 0) return "claimed";
      return existing?.rows[0]?.["status"] === "done" ? "duplicate" : "in-flight";
    },

    async complete(key, _now, expiresAt, { tx } = {}) {
      const update = sql`UPDATE postel_received SET status = 'done', expires_at = ${expiresAt}
        WHERE source = ${key.source} AND id = ${key.id}`;
      // On the caller's transaction, never through the first-use migration: its write lock would
      // wait for that very transaction.
      if (tx !== undefined) await rowsOn(tx, update);
      else await db.write([toStatement(update)]);
    },

    async release(key) {
      await db.write([
        {
          sql: "DELETE FROM postel_received WHERE source = :source AND id = :id AND status = 'processing'",
          args: { source: key.source, id: key.id },
        },
      ]);
    },

    migrate: lifecycle.migrate,
    async close() {
      await sweeper.settled();
      await lifecycle.close();
    },
  };
}
