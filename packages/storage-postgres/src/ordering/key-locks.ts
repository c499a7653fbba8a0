import type { PendingQuery, Row, Sql } from "postgres";
import { asJson } from "../internal/rows.js";

// The first key of the two-key advisory locks that serialise work per ordering key ("post" in
// ASCII): apart from every other advisory lock (migrate() and claimLimited take one-key locks).
const ORDERING_LOCK_SPACE = 1_886_351_220;

/**
 * Takes, for the rest of the transaction, an advisory lock per ordering key in `keys`: the first
 * statement of every transaction that reads a key's open deliveries and then changes them, so the
 * check and the write of one key never interleave across instances (READ COMMITTED gives each later
 * statement a snapshot taken after the lock is held). Locked in ascending hash order, through an
 * array (unnest keeps its order), so two transactions sharing keys never deadlock; two keys that
 * share a hash only wait for each other.
 */
export function lockKeys(sql: Sql, keys: readonly string[]): PendingQuery<Row[]> {
  return sql`
    SELECT count(pg_advisory_xact_lock(${ORDERING_LOCK_SPACE}::int, h)) AS locked
    FROM unnest(ARRAY(
      SELECT DISTINCT hashtext(k.key) FROM json_array_elements_text(${asJson(keys)}::text::json) AS k(key)
      ORDER BY 1
    )) AS h`;
}
