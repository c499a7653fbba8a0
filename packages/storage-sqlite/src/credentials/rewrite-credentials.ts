import type { CredentialStore } from "@postel/core/storage";
import type { Db } from "../internal/database.js";

// The position of secret row `alias` among its endpoint's secrets, newest first (0 = newest), as a
// JSON path into an array given in that order.
const position = (alias: string) =>
  `'$[' || (SELECT count(*) FROM postel_endpoint_secrets later
    WHERE later.endpoint_id = ${alias}.endpoint_id AND later.seq > ${alias}.seq) || ']'`;

/** The endpoint's stored headers equal `:expectedHeaders` (the same names, each the same value, any order). */
const HEADERS_EXPECTED = `(SELECT count(*) FROM json_each(postel_endpoints.headers))
    = (SELECT count(*) FROM json_each(:expectedHeaders))
  AND NOT EXISTS (SELECT 1 FROM json_each(postel_endpoints.headers) h
    WHERE h.value IS NOT (SELECT x.value FROM json_each(:expectedHeaders) x WHERE x.key = h.key))`;

/** The endpoint's secrets, newest first, equal `:expectedSecrets`. */
const SECRETS_EXPECTED = `(SELECT count(*) FROM postel_endpoint_secrets WHERE endpoint_id = :id)
    = json_array_length(:expectedSecrets)
  AND NOT EXISTS (SELECT 1 FROM postel_endpoint_secrets s
    WHERE s.endpoint_id = :id AND s.secret IS NOT json_extract(:expectedSecrets, ${position("s")}))`;

/**
 * Compare-and-set of an endpoint's stored credentials, in one write transaction (the single writer):
 * the endpoint's headers are rewritten only while headers and secrets are the expected ones, and its
 * secrets only when that happened (`changes()` still reports the first statement while the second
 * runs). No revision bump: the plain text is the same.
 */
export function credentialStore(db: Db): CredentialStore {
  return {
    async rewriteCredentials(id, expected, next) {
      const [endpoint] = await db.write([
        {
          sql: `UPDATE postel_endpoints SET headers = :nextHeaders
            WHERE id = :id AND deleted_at IS NULL AND ${HEADERS_EXPECTED} AND ${SECRETS_EXPECTED}`,
          args: {
            id,
            nextHeaders: JSON.stringify(next.headers),
            expectedHeaders: JSON.stringify(expected.headers),
            expectedSecrets: JSON.stringify(expected.secrets),
          },
        },
        {
          sql: `UPDATE postel_endpoint_secrets
            SET secret = json_extract(:nextSecrets, ${position("postel_endpoint_secrets")})
            WHERE endpoint_id = :id AND changes() > 0`,
          args: { id, nextSecrets: JSON.stringify(next.secrets) },
        },
      ]);
      return (endpoint?.rowsAffected ?? 0) > 0;
    },
  };
}
