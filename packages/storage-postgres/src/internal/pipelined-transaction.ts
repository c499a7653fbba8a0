import type { PendingQuery, ReservedSql, Row, RowList, Sql } from "postgres";

/**
 * Runs `BEGIN; ...statements; COMMIT` on one reserved connection without waiting between them, so a
 * multi-statement transaction costs one round trip. If a statement fails, the server aborts the
 * transaction, the rest fail with 25P02, COMMIT answers ROLLBACK, and the first error is thrown.
 * Each statement still gets its own snapshot (READ COMMITTED), so a later statement sees the rows an
 * earlier `SELECT ... FOR UPDATE` waited for.
 *
 * The statements are keyed batch writes (a few dozen rows found by primary key or a selective index)
 * and run with generic plans (`plan_cache_mode = force_generic_plan`): postgres.js prepares them, and
 * planning the outcome statement afresh at every batch costs more CPU than running it (drain, issue
 * 25: 140 against 80 ms of PostgreSQL CPU per 1,000 deliveries). A generic plan is made once per
 * connection, with the statistics of that moment, and kept: so every statement reaches every table
 * through an index condition holding the batch's own keys, given as an array (`id = ANY(ARRAY(...))`
 * beside the join condition), never through a join alone. A join alone, planned while the table was
 * empty (the deliveries of a fresh install, or just after a VACUUM ANALYZE of an empty table), was
 * planned as a full index scan of the table for every batch, kept as the table grew: PostgreSQL's CPU
 * per delivery doubled on a 20,000-message drain (issue 25). Bounded by its keys, any join method is
 * cheap, so hash joins are allowed; sequential scans are not (`enable_seqscan = off`), in case a
 * statement ever lacks its keys (test/plans.test.ts checks them all).
 */
export async function pipelinedTransaction(
  sql: Sql,
  statements: (tx: ReservedSql) => PendingQuery<Row[]>[],
): Promise<RowList<Row[]>[]> {
  const tx = await sql.reserve();
  let connectionLost = false;
  try {
    const queries = [
      tx`BEGIN`,
      tx`SELECT set_config('enable_seqscan', 'off', true), set_config('plan_cache_mode', 'force_generic_plan', true)`,
      ...statements(tx),
      tx`COMMIT`,
    ];
    // When the connection drops (a database restart), postgres.js 3.4 never settles the queries it
    // queued behind an unanswered one on a reserved connection: stop at the first connection error.
    const lost = new Promise<unknown>((resolve) => {
      for (const query of queries) query.catch((error: unknown) => isConnectionLoss(error) && resolve(error));
    });
    const settled = await Promise.race([Promise.allSettled(queries), lost]);
    if (!Array.isArray(settled)) {
      connectionLost = true;
      throw settled;
    }
    const failed = settled.find((result) => result.status === "rejected");
    if (failed) throw failed.reason;
    return settled.slice(2, -1).map((result) => (result as PromiseFulfilledResult<RowList<Row[]>>).value);
  } finally {
    // postgres.js 3.4 puts a released connection back in its open queue even after it closed, and the
    // next query on it crashes the process from a timer (its socket is null). A lost connection is
    // already in the pool's closed queue (to be reconnected on demand): leave it there.
    if (!connectionLost) tx.release();
  }
}

// postgres.js connection errors, socket errors, and FATAL server errors, after which the server closes
// the connection (e.g. 57P01 "terminating connection due to administrator command").
const CONNECTION_LOST = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
]);

function isConnectionLoss(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  return (
    (typeof code === "string" && CONNECTION_LOST.has(code)) || severity === "FATAL" || severity === "PANIC"
  );
}
