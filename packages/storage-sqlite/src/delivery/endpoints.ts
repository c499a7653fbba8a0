import type { InValue } from "@libsql/client";
import type {
  EndpointFields,
  EndpointQuery,
  EndpointRecord,
  EndpointSecret,
  EndpointState,
  HealthStats,
} from "@postel/core/storage";
import type { Db, Statement } from "../internal/database.js";
import { int, toEndpoint, toJson } from "../internal/rows.js";
import {
  bumpRevision,
  bumpRevisionIfChanged,
  finaliseMessages,
  jsonArg,
  jsonRows,
  OPEN_STATUSES,
  readRevision,
} from "../internal/sql-fragments.js";

/** Live endpoints with their secrets as a JSON array, newest secret first. */
const SELECT_ENDPOINTS = `SELECT e.*, (
    SELECT json_group_array(json_object('secret', s.secret, 'createdAt', s.created_at, 'expiresAt', s.expires_at))
    FROM (SELECT * FROM postel_endpoint_secrets WHERE endpoint_id = e.id ORDER BY seq DESC) s
  ) AS secrets
  FROM postel_endpoints e WHERE e.deleted_at IS NULL`;

const LIVE = "EXISTS (SELECT 1 FROM postel_endpoints WHERE id = :id AND deleted_at IS NULL)";

/** Column and encoding of every user-settable field (objects are stored as JSON text). */
const FIELD_COLUMNS: {
  [K in keyof EndpointFields]: [column: string, encode: (v: EndpointFields[K]) => InValue];
} = {
  url: ["url", (v) => v],
  description: ["description", (v) => v],
  types: ["types", toJson],
  filter: ["filter", toJson],
  filterFn: ["filter_fn", (v) => v],
  transform: ["transform", (v) => v],
  headers: ["headers", toJson],
  retryPolicy: ["retry_policy", toJson],
  circuitBreaker: ["circuit_breaker", toJson],
  autoDisable: ["auto_disable", toJson],
  maxInFlight: ["max_in_flight", (v) => v],
  rateLimit: ["rate_limit", (v) => v],
  tenantId: ["tenant_id", (v) => v],
  metadata: ["metadata", toJson],
  onKeyFailure: ["on_key_failure", (v) => v],
};

const SECRET_KEYS = ["secret", "createdAt", "expiresAt"] as const;

/** Insert an endpoint's secrets (given newest first) so that `seq` grows from oldest to newest. */
function insertSecrets(id: string, secrets: EndpointSecret[]): Statement {
  return {
    sql: `INSERT INTO postel_endpoint_secrets (endpoint_id, secret, created_at, expires_at)
      SELECT :id, s.secret, s.createdAt, s.expiresAt FROM (${jsonRows("secrets", SECRET_KEYS)}) s
      WHERE ${LIVE}`,
    args: { id, secrets: jsonArg([...secrets].reverse(), SECRET_KEYS) },
  };
}

/** The endpoint verbs; every write bumps the revision fan-out caches are keyed by. */
export function endpointStore(db: Db) {
  const getEndpoint = async (id: string): Promise<EndpointRecord | null> => {
    const [row] = await db.read({ sql: `${SELECT_ENDPOINTS} AND e.id = :id`, args: { id } });
    return row ? toEndpoint(row) : null;
  };

  return {
    async createEndpoint(e: EndpointRecord): Promise<void> {
      const values: Record<string, InValue> = {
        id: e.id,
        state: e.state,
        circuit_open_until: e.circuitOpenUntil,
        disabled_reason: e.disabledReason,
        created_at: e.createdAt,
        updated_at: e.updatedAt,
      };
      for (const [field, [column, encode]] of Object.entries(FIELD_COLUMNS)) {
        values[column] = (encode as (v: unknown) => InValue)(e[field as keyof EndpointFields]);
      }
      const columns = Object.keys(values);
      await db.write([
        {
          sql: `INSERT INTO postel_endpoints (${columns.join(", ")}) VALUES (${columns.map((c) => `:${c}`).join(", ")})`,
          args: values,
        },
        insertSecrets(e.id, e.secrets),
        bumpRevision,
      ]);
    },

    getEndpoint,

    async listEndpoints(query: EndpointQuery): Promise<EndpointRecord[]> {
      const rows = await db.read({
        sql: `${SELECT_ENDPOINTS}
          AND (:tenantId IS NULL OR e.tenant_id = :tenantId)
          AND (:state IS NULL OR e.state = :state)
          AND (:after IS NULL OR e.id > :after)
          ORDER BY e.id LIMIT :limit`,
        args: {
          tenantId: query.tenantId ?? null,
          state: query.state ?? null,
          after: query.after ?? null,
          limit: Math.max(0, query.limit),
        },
      });
      return rows.map(toEndpoint);
    },

    async allEndpoints(): Promise<EndpointRecord[]> {
      return (await db.read({ sql: `${SELECT_ENDPOINTS} ORDER BY e.id` })).map(toEndpoint);
    },

    async endpointsRevision(): Promise<number> {
      const [row] = await db.read(readRevision);
      return row ? int(row, "value") : 0;
    },

    async updateEndpoint(id: string, fields: Partial<EndpointFields>, now: number) {
      const args: Record<string, InValue> = { id, now };
      const sets = ["updated_at = :now"];
      for (const [field, [column, encode]] of Object.entries(FIELD_COLUMNS)) {
        const value = fields[field as keyof EndpointFields];
        if (value === undefined) continue;
        sets.push(`${column} = :${column}`);
        args[column] = (encode as (v: unknown) => InValue)(value);
      }
      await db.write([
        { sql: `UPDATE postel_endpoints SET ${sets.join(", ")} WHERE id = :id AND deleted_at IS NULL`, args },
        bumpRevisionIfChanged,
      ]);
      return getEndpoint(id);
    },

    async deleteEndpoint(id: string, now: number): Promise<boolean> {
      const [deleted] = await db.write([
        {
          sql: "UPDATE postel_endpoints SET deleted_at = :now, updated_at = :now WHERE id = :id AND deleted_at IS NULL",
          args: { id, now },
        },
        bumpRevisionIfChanged,
        {
          sql: `UPDATE postel_deliveries SET status = 'cancelled', lease_token = NULL, lease_owner = NULL, updated_at = :now
            WHERE endpoint_id = :id AND status IN ${OPEN_STATUSES}`,
          args: { id, now },
        },
        // ORDERING_RULES.deleteEndpoint: its keys are released with it.
        { sql: "DELETE FROM postel_held_keys WHERE endpoint_id = :id", args: { id } },
        finaliseMessages(
          `SELECT message_id FROM postel_deliveries
            WHERE endpoint_id = :id AND status = 'cancelled' AND updated_at = :now`,
          { id, now },
        ),
      ]);
      return (deleted?.rowsAffected ?? 0) > 0;
    },

    async transitionEndpoint(
      id: string,
      expected: { state: EndpointState; circuitOpenUntil: number | null },
      next: { state: EndpointState; circuitOpenUntil: number | null; disabledReason: string | null },
      now: number,
    ): Promise<boolean> {
      // `IS` compares NULLs as equal, so an expected `circuitOpenUntil: null` matches.
      const [transitioned] = await db.write([
        {
          sql: `UPDATE postel_endpoints
            SET state = :state, circuit_open_until = :until, disabled_reason = :reason, updated_at = :now
            WHERE id = :id AND deleted_at IS NULL AND state = :expectedState AND circuit_open_until IS :expectedUntil`,
          args: {
            id,
            now,
            state: next.state,
            until: next.circuitOpenUntil,
            reason: next.disabledReason,
            expectedState: expected.state,
            expectedUntil: expected.circuitOpenUntil,
          },
        },
        bumpRevisionIfChanged,
      ]);
      return (transitioned?.rowsAffected ?? 0) > 0;
    },

    async addEndpointSecret(id: string, secret: EndpointSecret, previousExpireAt: number): Promise<void> {
      await db.write([
        {
          sql: `UPDATE postel_endpoint_secrets SET expires_at = :expireAt
            WHERE endpoint_id = :id AND expires_at IS NULL AND ${LIVE}`,
          args: { id, expireAt: previousExpireAt },
        },
        insertSecrets(id, [secret]),
        // Fan-out caches endpoints with their secrets by revision, so a new secret is a change too.
        bumpRevisionIfChanged,
      ]);
    },

    async endpointHealth(id: string, since: number): Promise<HealthStats> {
      const [row] = await db.read({
        sql: `SELECT coalesce(sum(attempts), 0) AS attempts, coalesce(sum(failures), 0) AS failures
          FROM postel_endpoint_health WHERE endpoint_id = :id AND bucket_start >= :since`,
        args: { id, since },
      });
      return { attempts: row ? int(row, "attempts") : 0, failures: row ? int(row, "failures") : 0 };
    },
  };
}
