import type { EndpointSecret, EndpointState, HealthStats } from "@postel/core/storage";
import type { Sql } from "postgres";
import { pipelinedTransaction } from "../internal/pipelined-transaction.js";
import { bumpRevision } from "./endpoints.js";
import { finaliseMessages, lockMessagesOf } from "../internal/sql-fragments.js";

/**
 * Soft-deletes the endpoint, cancels its pending, held and waiting deliveries (dropping their leases,
 * so a worker's late outcome is refused), releases the keys held on it (`ORDERING_RULES.deleteEndpoint`)
 * and finalises their messages — one pipelined transaction that locks the affected messages first, like
 * `recordOutcomes`. A worker ending a delivery that holds a key locks its message too, so its hold is
 * either written before this statement's snapshot (and deleted here) or never (its lease was dropped).
 */
export async function deleteEndpoint(sql: Sql, id: string, now: number): Promise<boolean> {
  const [, rows] = await pipelinedTransaction(sql, (tx) => [
    lockMessagesOf(tx, tx`d.endpoint_id = ${id} AND d.status IN ('pending', 'held', 'waiting')`),
    tx`
      WITH e AS (
        UPDATE postel.endpoints SET deleted_at = ${now}::bigint, updated_at = ${now}::bigint
        WHERE id = ${id} AND deleted_at IS NULL
        RETURNING id
      ), changed AS (
        UPDATE postel.deliveries d SET status = 'cancelled', lease_token = NULL, lease_owner = NULL,
          updated_at = ${now}::bigint
        WHERE d.endpoint_id IN (SELECT id FROM e) AND d.status IN ('pending', 'held', 'waiting')
        RETURNING d.id, d.message_id, d.status
      ), released AS (
        DELETE FROM postel.held_keys WHERE endpoint_id IN (SELECT id FROM e)
      ), ${finaliseMessages(tx, now)}, ${bumpRevision(tx, "EXISTS (SELECT 1 FROM e)")}
      SELECT id FROM e`,
  ]);
  return (rows?.length ?? 0) > 0;
}

/** Compare-and-set of the state-machine fields; exactly one concurrent caller wins. */
export async function transitionEndpoint(
  sql: Sql,
  id: string,
  expected: { state: EndpointState; circuitOpenUntil: number | null },
  next: { state: EndpointState; circuitOpenUntil: number | null; disabledReason: string | null },
  now: number,
): Promise<boolean> {
  const rows = await sql`
    WITH e AS (
      UPDATE postel.endpoints SET
        state = ${next.state},
        circuit_open_until = ${next.circuitOpenUntil}::bigint,
        disabled_reason = ${next.disabledReason}::text,
        updated_at = ${now}::bigint
      WHERE id = ${id} AND deleted_at IS NULL
        AND state = ${expected.state}
        AND circuit_open_until IS NOT DISTINCT FROM ${expected.circuitOpenUntil}::bigint
      RETURNING id
    ), ${bumpRevision(sql, "EXISTS (SELECT 1 FROM e)")}
    SELECT id FROM e`;
  return rows.length > 0;
}

/** Adds a secret (newest signs first) and gives the older ones without expiry `previousExpireAt`. */
export async function addEndpointSecret(
  sql: Sql,
  id: string,
  secret: EndpointSecret,
  previousExpireAt: number,
): Promise<void> {
  // The UPDATE reads the snapshot taken before the INSERT, so the new secret keeps its own expiry.
  await sql`
    WITH e AS (
      SELECT id FROM postel.endpoints WHERE id = ${id} AND deleted_at IS NULL
    ), older AS (
      UPDATE postel.endpoint_secrets SET expires_at = ${previousExpireAt}::bigint
      WHERE endpoint_id IN (SELECT id FROM e) AND expires_at IS NULL
    ), added AS (
      INSERT INTO postel.endpoint_secrets (endpoint_id, secret, created_at, expires_at)
      SELECT e.id, ${secret.secret}, ${secret.createdAt}::bigint, ${secret.expiresAt}::bigint FROM e
    ), ${bumpRevision(sql, "EXISTS (SELECT 1 FROM e)")}
    SELECT 1`;
}

/** Sums the endpoint's health buckets starting at or after `since`. */
export async function endpointHealth(sql: Sql, id: string, since: number): Promise<HealthStats> {
  const rows = await sql<{ attempts: string; failures: string }[]>`
    SELECT COALESCE(sum(attempts), 0) AS attempts, COALESCE(sum(failures), 0) AS failures
    FROM postel.endpoint_health
    WHERE endpoint_id = ${id} AND bucket_start >= ${since}::bigint`;
  return { attempts: Number(rows[0]?.attempts ?? 0), failures: Number(rows[0]?.failures ?? 0) };
}
