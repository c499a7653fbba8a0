import type { ClaimResult, DedupKey, DedupStore } from "@postel/core/inbound";
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
 * Run `migrate()` (or start a `PostgresStorage`) first.
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
  return {
    claim: (key, now, processingUntil) => run(() => claim(sql, key, now, processingUntil)),
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
