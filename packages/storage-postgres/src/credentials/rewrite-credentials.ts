import type { StoredCredentials } from "@postel/core/storage";
import type { Sql } from "postgres";
import { asJson } from "../internal/rows.js";

/**
 * Compare-and-set of an endpoint's stored credentials, in one statement. The endpoint row is updated
 * only while its headers equal the expected ones (jsonb equality: names in any order) and its secrets,
 * newest first, equal the expected list; each secret row is then rewritten only while it still holds
 * its expected value. A concurrent update of the endpoint waits on its row lock and the condition is
 * checked again on the row it committed, so a user's change is never overwritten; a secret added
 * meanwhile (a rotation) is a new row this statement leaves alone. No revision bump: the plain text is
 * the same.
 */
export async function rewriteCredentials(
  sql: Sql,
  id: string,
  expected: StoredCredentials,
  next: StoredCredentials,
): Promise<boolean> {
  const rows = await sql<{ id: string }[]>`
    WITH current_secrets AS (
      SELECT s.seq, s.secret, row_number() OVER (ORDER BY s.seq DESC) AS n
      FROM postel.endpoint_secrets s WHERE s.endpoint_id = ${id}
    ), e AS (
      UPDATE postel.endpoints e SET headers = ${asJson(next.headers)}::text::jsonb
      WHERE e.id = ${id} AND e.deleted_at IS NULL
        AND e.headers = ${asJson(expected.headers)}::text::jsonb
        AND (SELECT COALESCE(jsonb_agg(to_jsonb(c.secret) ORDER BY c.n), '[]'::jsonb) FROM current_secrets c)
          = ${asJson(expected.secrets)}::text::jsonb
      RETURNING e.id
    ), rewritten AS (
      UPDATE postel.endpoint_secrets s SET secret = x.secret
      FROM e, current_secrets c,
        jsonb_array_elements_text(${asJson(next.secrets)}::text::jsonb) WITH ORDINALITY AS x(secret, n)
      WHERE s.seq = c.seq AND c.n = x.n AND s.secret = c.secret
      RETURNING s.seq
    )
    SELECT id FROM e`;
  return rows.length > 0;
}
