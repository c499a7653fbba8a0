import type { EndpointFields, EndpointQuery, EndpointRecord } from "@postel/core/storage";
import type { PendingQuery, Row, Sql } from "postgres";
import { ENDPOINT_COLUMNS, type RawRow, asJson, toEndpoint } from "../internal/rows.js";

/** A CTE named `revision` that bumps `endpoints_revision` when `condition` holds (same statement as the write). */
export function bumpRevision(sql: Sql, condition: string): PendingQuery<Row[]> {
  return sql`revision AS (
    UPDATE postel.meta SET value = value + 1
    WHERE key = 'endpoints_revision' AND ${sql.unsafe(condition)}
  )`;
}

/** Inserts the endpoint and its secrets and bumps the revision, in one statement. */
export async function createEndpoint(sql: Sql, endpoint: EndpointRecord): Promise<void> {
  const { secrets, ...row } = endpoint;
  // Inserted oldest first: reads order secrets by the identity column, newest first.
  const oldestFirst = [...secrets].reverse();
  await sql`
    WITH e AS (
      INSERT INTO postel.endpoints (id, url, description, types, filter, filter_fn, transform, headers,
        retry_policy, circuit_breaker, auto_disable, max_in_flight, rate_limit, tenant_id, metadata, state,
        circuit_open_until, disabled_reason, created_at, updated_at, on_key_failure)
      SELECT r.id, r.url, r.description, r.types, r.filter, r."filterFn", r.transform, r.headers,
        r."retryPolicy", r."circuitBreaker", r."autoDisable", r."maxInFlight", r."rateLimit", r."tenantId",
        r.metadata, r.state, r."circuitOpenUntil", r."disabledReason", r."createdAt", r."updatedAt",
        r."onKeyFailure"
      FROM jsonb_to_record(${asJson(row)}::text::jsonb) AS r(id text, url text, description text, types jsonb,
        filter jsonb, "filterFn" text, transform text, headers jsonb, "retryPolicy" jsonb, "circuitBreaker" jsonb,
        "autoDisable" jsonb, "maxInFlight" integer, "rateLimit" double precision, "tenantId" text, metadata jsonb,
        state text, "circuitOpenUntil" bigint, "disabledReason" text, "createdAt" bigint, "updatedAt" bigint,
        "onKeyFailure" text)
      RETURNING id
    ), secrets AS (
      INSERT INTO postel.endpoint_secrets (endpoint_id, secret, created_at, expires_at)
      SELECT e.id, s.value->>'secret', (s.value->>'createdAt')::bigint, (s.value->>'expiresAt')::bigint
      FROM e, jsonb_array_elements(${asJson(oldestFirst)}::text::jsonb) WITH ORDINALITY AS s(value, n)
      ORDER BY s.n
    ), ${bumpRevision(sql, "true")}
    SELECT id FROM e`;
}

export async function getEndpoint(sql: Sql, id: string): Promise<EndpointRecord | null> {
  const rows = await sql<RawRow[]>`
    SELECT ${sql.unsafe(ENDPOINT_COLUMNS)} FROM postel.endpoints e WHERE e.id = ${id} AND e.deleted_at IS NULL`;
  return rows[0] ? toEndpoint(rows[0]) : null;
}

/** Live endpoints, oldest first (ids sort by creation time), past the `after` id. */
export async function listEndpoints(sql: Sql, query: EndpointQuery): Promise<EndpointRecord[]> {
  const empty = sql``;
  const rows = await sql<RawRow[]>`
    SELECT ${sql.unsafe(ENDPOINT_COLUMNS)} FROM postel.endpoints e
    WHERE e.deleted_at IS NULL
      ${query.tenantId !== undefined ? sql`AND e.tenant_id = ${query.tenantId}` : empty}
      ${query.state !== undefined ? sql`AND e.state = ${query.state}` : empty}
      ${query.after !== undefined ? sql`AND e.id > ${query.after}` : empty}
    ORDER BY e.id
    LIMIT ${query.limit}`;
  return rows.map(toEndpoint);
}

/** Every live endpoint, for fan-out matching. */
export async function allEndpoints(sql: Sql): Promise<EndpointRecord[]> {
  const rows = await sql<RawRow[]>`
    SELECT ${sql.unsafe(ENDPOINT_COLUMNS)} FROM postel.endpoints e
    WHERE e.deleted_at IS NULL ORDER BY e.id`;
  return rows.map(toEndpoint);
}

export async function endpointsRevision(sql: Sql): Promise<number> {
  const rows = await sql<{ value: string }[]>`SELECT value FROM postel.meta WHERE key = 'endpoints_revision'`;
  return Number(rows[0]?.value ?? 0);
}

// [column, key in EndpointFields, the column's type (the JSON patch value is converted to it)]
const UPDATABLE: [string, keyof EndpointFields, "text" | "jsonb" | "integer" | "double precision"][] = [
  ["url", "url", "text"],
  ["description", "description", "text"],
  ["types", "types", "jsonb"],
  ["filter", "filter", "jsonb"],
  ["filter_fn", "filterFn", "text"],
  ["transform", "transform", "text"],
  ["headers", "headers", "jsonb"],
  ["retry_policy", "retryPolicy", "jsonb"],
  ["circuit_breaker", "circuitBreaker", "jsonb"],
  ["auto_disable", "autoDisable", "jsonb"],
  ["max_in_flight", "maxInFlight", "integer"],
  ["rate_limit", "rateLimit", "double precision"],
  ["tenant_id", "tenantId", "text"],
  ["metadata", "metadata", "jsonb"],
  ["on_key_failure", "onKeyFailure", "text"],
];

// Each column takes the patch's value when the key is present (JSON null → SQL NULL), else keeps its own.
const SET_FROM_PATCH = UPDATABLE.map(([column, key, kind]) => {
  const value =
    kind === "jsonb" ? `NULLIF(p.patch->'${key}', 'null'::jsonb)` : `(p.patch->>'${key}')::${kind}`;
  return `${column} = CASE WHEN p.patch ? '${key}' THEN ${value} ELSE e.${column} END`;
}).join(",\n");

/** Overwrites the given user fields (one statement, revision bumped); null when missing. */
export async function updateEndpoint(
  sql: Sql,
  id: string,
  fields: Partial<EndpointFields>,
  now: number,
): Promise<EndpointRecord | null> {
  const rows = await sql<RawRow[]>`
    WITH p AS (SELECT ${asJson(fields)}::text::jsonb AS patch), e AS (
      UPDATE postel.endpoints e SET ${sql.unsafe(SET_FROM_PATCH)}, updated_at = ${now}::bigint
      FROM p WHERE e.id = ${id} AND e.deleted_at IS NULL
      RETURNING e.*
    ), ${bumpRevision(sql, "EXISTS (SELECT 1 FROM e)")}
    SELECT ${sql.unsafe(ENDPOINT_COLUMNS)} FROM e`;
  return rows[0] ? toEndpoint(rows[0]) : null;
}
