import {
  type EndpointState,
  type StatsQuery,
  type StorageStats,
  statsOfEndpoints,
} from "@postel/core/storage";
import type { Db } from "../internal/database.js";
import { int, intOrNull, str, strOrNull } from "../internal/rows.js";

// Per endpoint, each count is a range of postel_deliveries_endpoint_status (endpoint, status), which
// holds that endpoint's pending, held or dead-lettered rows apart from its finished history; attempts
// come from its health buckets (primary key range).
// Each count stops at :cap (-1: no limit, SQLite's LIMIT -1), a LIMIT inside the count, so a backlog
// of a million rows reads at most the cap of them (see StatsQuery.countCap).
const PENDING = "FROM postel_deliveries d WHERE d.endpoint_id = e.id AND d.status = 'pending'";
const capped = (rows: string) => `(SELECT count(*) FROM (${rows} LIMIT :cap))`;
const countStatus = (status: string) =>
  capped(`SELECT 1 FROM postel_deliveries d WHERE d.endpoint_id = e.id AND d.status = '${status}'`);
// Live leases are few (at most the workers' concurrency): counted through their own partial index.
const IN_FLIGHT = `SELECT 1 FROM postel_deliveries d INDEXED BY postel_deliveries_lease_token
  WHERE d.lease_token IS NOT NULL AND d.endpoint_id = e.id AND d.status = 'pending' AND d.next_attempt_at > :now`;
const HEALTH = "FROM postel_endpoint_health h WHERE h.endpoint_id = e.id AND h.bucket_start >= :since";

const endpointCounts = (
  where: string,
) => `SELECT e.id, e.url, e.description, e.state, e.circuit_open_until, e.deleted_at IS NULL AS live,
    ${capped(`SELECT 1 ${PENDING} AND d.next_attempt_at <= :now`)} AS due,
    (SELECT min(d.next_attempt_at) ${PENDING} AND d.next_attempt_at <= :now) AS oldest_due_at,
    ${capped(IN_FLIGHT)} AS in_flight,
    ${capped(`SELECT 1 ${PENDING} AND d.next_attempt_at > :now AND d.lease_token IS NULL`)} AS scheduled,
    ${countStatus("held")} AS held,
    ${countStatus("dead-lettered")} AS dead_letters,
    ${countStatus("failed")} AS failed,
    (SELECT coalesce(sum(h.attempts), 0) ${HEALTH}) AS attempts,
    (SELECT coalesce(sum(h.failures), 0) ${HEALTH}) AS failures
  FROM postel_endpoints e ${where} ORDER BY e.id`;
const ENDPOINT_COUNTS = endpointCounts("");
const ONE_ENDPOINT_COUNTS = endpointCounts("WHERE e.id = :endpointId");

/** `stats`: two reads (per endpoint, and un-fanned messages through postel_messages_unfanned). */
export function statsStore(db: Db) {
  return {
    async stats(query: StatsQuery): Promise<StorageStats> {
      const cap = query.countCap === undefined ? -1 : Math.max(0, Math.floor(query.countCap));
      const [rows, [unfanned]] = await Promise.all([
        query.endpointId === undefined
          ? db.read({ sql: ENDPOINT_COUNTS, args: { now: query.now, since: query.since, cap } })
          : db.read({
              sql: ONE_ENDPOINT_COUNTS,
              args: { now: query.now, since: query.since, endpointId: query.endpointId, cap },
            }),
        db.read({
          sql: `SELECT count(*) AS n FROM (SELECT 1 FROM postel_messages
            WHERE fanned_out_at IS NULL AND status = 'pending' LIMIT :cap)`,
          args: { cap },
        }),
      ]);
      const endpoints = rows.map((row) => ({
        id: str(row, "id"),
        url: str(row, "url"),
        description: strOrNull(row, "description"),
        state: str(row, "state") as EndpointState,
        circuitOpenUntil: intOrNull(row, "circuit_open_until"),
        due: int(row, "due"),
        inFlight: int(row, "in_flight"),
        scheduled: int(row, "scheduled"),
        held: int(row, "held"),
        deadLetters: int(row, "dead_letters"),
        failed: int(row, "failed"),
        attempts: int(row, "attempts"),
        failures: int(row, "failures"),
        live: int(row, "live") === 1,
        oldestDueAt: intOrNull(row, "oldest_due_at"),
      }));
      return statsOfEndpoints(endpoints, unfanned ? int(unfanned, "n") : 0);
    },
  };
}
