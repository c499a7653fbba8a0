import { type ClaimResult, type DedupKey, type DedupStore, expirySweeper } from "@postel/core/inbound";
import type { Sql } from "postgres";
import { type PostgresConnection, resolveConnection } from "./internal/connection.js";
import { statement } from "./internal/statement.js";
import { executorFor, type PostgresTransaction } from "./internal/transaction.js";
import { asConnectionError } from "./internal/connection-errors.js";
import { asSchemaError } from "./internal/schema-errors.js";

/** A `DedupStore` on Postgres that can also close the pool it opened. */
export interface PostgresDedupStore extends DedupStore {
  /** Mark the webhook handled inside your own transaction (atomic with the handler's writes). */
  complete(
    key: DedupKey,
    now: number,
    expiresAt: number,
    options?: { tx?: PostgresTransaction },
  ): Promise<void>;
  close(): Promise<void>;
}

/**
 * Inbound dedup on Postgres (`postel.received`): of N concurrent claims of one `webhook-id`, the
 * unique key lets exactly one insert; an expired record is taken over in the same statement.
 * Claims also sweep expired records away (at most once a minute, in the background), so the table
 * holds only the live window. Run `migrate()` (or start a `PostgresStorage`) first.
 * @example
 * const receiver = Receiver({ sources: { billing: { verify: secret, dedup: PostgresDedupStore({ url }) } } });
 */
export function PostgresDedupStore(connection: PostgresConnection): PostgresDedupStore {
  const { sql, owned } = resolveConnection(connection, "PostgresDedupStore");
  const run = async <T>(query: () => Promise<T>): Promise<T> => {
    try {
      return await query();
    } catch (error) {
      throw asConnectionError(asSchemaError(error), sql);
    }
  };
  // Expired records are dead weight (a claim takes one over like a missing one): a sweep on use
  // deletes them a batch (one short statement) at a time, at most once a minute per store, skipping
  // rows a claim holds. `expires_at` has its own index for this.
  const sweeper = expirySweeper(async (now, batch) => {
    // By ctid, handed over as an array (a TID scan, as in retention): a join back on the key can
    // hash the whole table.
    const gone = await sql`
      DELETE FROM postel.received
      WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM postel.received WHERE expires_at <= ${now}::bigint
        ORDER BY expires_at LIMIT ${batch} FOR UPDATE SKIP LOCKED
      )) AND expires_at <= ${now}::bigint`;
    return gone.count;
  });
  return {
    claim: (key, now, processingUntil) => {
      sweeper.maybeSweep(now);
      return run(() => claim(sql, key, now, processingUntil));
    },
    complete: (key, _now, expiresAt, options = {}) =>
      run(async () => {
        await executorFor(
          sql,
          options.tx,
        )(
          statement`UPDATE postel.received SET status = 'done', expires_at = ${expiresAt}::bigint
            WHERE source = ${key.source} AND id = ${key.id}`,
        );
      }),
    release: (key) =>
      run(async () => {
        await sql`DELETE FROM postel.received WHERE source = ${key.source} AND id = ${key.id} AND status = 'processing'`;
      }),
    close: async () => {
      await sweeper.settled();
      if (owned) await sql.end();
    },
  };
}

async function claim(sql: Sql, key: DedupKey, now: number, until: number): Promise<ClaimResult> {
  // Two rounds at most: a record deleted (released) between the insert and the read is claimed again.
  for (let round = 0; round < 2; round++) {
    const inserted = await sql`
      INSERT INTO postel.received AS r (source, id, status, received_at, expires_at)
      VALUES (${key.source}, ${key.id}, 'processing', ${now}, ${until})
      ON CONFLICT (source, id) DO UPDATE
        SET status = 'processing', received_at = excluded.received_at, expires_at = excluded.expires_at
        WHERE r.expires_at <= ${now}
      RETURNING 1`;
    if (inserted.length > 0) return "claimed";
    const [existing] = await sql<{ status: string }[]>`
      SELECT status FROM postel.received WHERE source = ${key.source} AND id = ${key.id}`;
    if (existing) return existing.status === "done" ? "duplicate" : "in-flight";
  }
  return "in-flight";
}
