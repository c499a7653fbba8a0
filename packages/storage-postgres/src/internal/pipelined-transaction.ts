import type { PendingQuery, ReservedSql, Row, RowList, Sql } from "postgres";

/**
 * Runs `BEGIN; ...statements; COMMIT` on one reserved connection without waiting between them, so a
 * multi-statement transaction costs one round trip. If a statement fails, the server aborts the
 * transaction, the rest fail with 25P02, COMMIT answers ROLLBACK, and the first error is thrown.
 * Each statement still gets its own snapshot (READ COMMITTED), so a later statement sees the rows an
 * earlier `SELECT ... FOR UPDATE` waited for.
 */
export async function pipelinedTransaction(
  sql: Sql,
  statements: (tx: ReservedSql) => PendingQuery<Row[]>[],
): Promise<RowList<Row[]>[]> {
  const tx = await sql.reserve();
  try {
    const settled = await Promise.allSettled([tx`BEGIN`, ...statements(tx), tx`COMMIT`]);
    const failed = settled.find((result) => result.status === "rejected");
    if (failed) throw failed.reason;
    return settled.slice(1, -1).map((result) => (result as PromiseFulfilledResult<RowList<Row[]>>).value);
  } finally {
    tx.release();
  }
}
