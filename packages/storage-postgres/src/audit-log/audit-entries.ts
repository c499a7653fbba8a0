import type { AuditCountQuery, AuditLogQuery, AuditLogRecord, AuditPruneRequest } from "@postel/core/storage";
import type { Sql } from "postgres";
import { AUDIT_ENTRY_COLUMNS, asJson, epochMs, type RawRow, toAuditEntry } from "../internal/rows.js";

/**
 * One INSERT; a key already used inserts nothing (`ON CONFLICT DO NOTHING` on the partial unique
 * index, which also makes concurrent inserts of one key wait for the first and then do nothing).
 */
export async function appendAuditEntry(sql: Sql, entry: AuditLogRecord): Promise<boolean> {
  const detail = entry.detail === null ? null : asJson(entry.detail);
  const rows = await sql`
    INSERT INTO postel.audit_log (id, at, tenant_id, actor, action, target, source, detail, key)
    VALUES (${entry.id}, ${epochMs(entry.at)}::bigint, ${entry.tenantId}, ${entry.actor}, ${entry.action},
      ${entry.target}, ${entry.source}, ${detail}::text::jsonb, ${entry.key})
    ON CONFLICT (key) WHERE key IS NOT NULL DO NOTHING
    RETURNING 1`;
  return rows.length === 1;
}

/** The statement of `listAuditEntries` (exported for the plan tests): only the filters given reach the SQL. */
export function listAuditEntriesStatement(sql: Sql, query: AuditLogQuery) {
  const empty = sql``;
  // Newest first on the primary key, or on audit_log_tenant_id_idx for one tenant: a page reads its rows.
  return sql<RawRow[]>`
    SELECT ${sql.unsafe(AUDIT_ENTRY_COLUMNS)} FROM postel.audit_log
    WHERE true
      ${query.tenantId !== undefined ? sql`AND tenant_id = ${query.tenantId}` : empty}
      ${query.action !== undefined ? sql`AND action = ${query.action}` : empty}
      ${query.since !== undefined ? sql`AND at >= ${epochMs(query.since)}::bigint` : empty}
      ${query.until !== undefined ? sql`AND at < ${epochMs(query.until)}::bigint` : empty}
      ${query.after !== undefined ? sql`AND id < ${query.after}` : empty}
    ORDER BY id DESC
    LIMIT ${Math.max(0, query.limit)}`;
}

/** Entries newest first by id, filtered, below the `after` id. */
export async function listAuditEntries(sql: Sql, query: AuditLogQuery): Promise<AuditLogRecord[]> {
  return (await listAuditEntriesStatement(sql, query)).map(toAuditEntry);
}

/** The statement of `countAuditEntries`: one range of audit_log_tenant_action_at_idx per action. */
export function countAuditEntriesStatement(sql: Sql, query: AuditCountQuery) {
  return sql<RawRow[]>`
    SELECT count(*) AS n FROM postel.audit_log
    WHERE ${query.tenantId === null ? sql`tenant_id IS NULL` : sql`tenant_id = ${query.tenantId}`}
      AND action = ANY(${sql.array([...query.actions])}::text[])
      AND at >= ${epochMs(query.since)}::bigint`;
}

/** How many entries of the tenant have one of the actions since `since`. */
export async function countAuditEntries(sql: Sql, query: AuditCountQuery): Promise<number> {
  if (query.actions.length === 0) return 0;
  const [row] = await countAuditEntriesStatement(sql, query);
  return Number(row?.["n"] ?? 0);
}

/** The oldest entries before `before`, at most `limit`, deleted in one statement. */
export async function pruneAuditEntries(sql: Sql, request: AuditPruneRequest): Promise<number> {
  const [row] = await pruneAuditEntriesStatement(sql, request);
  return Number(row?.["n"] ?? 0);
}

/** The statement of `pruneAuditEntries` (the plan tests pin audit_log_at_idx). */
export function pruneAuditEntriesStatement(sql: Sql, request: AuditPruneRequest) {
  return sql<RawRow[]>`
    WITH gone AS (
      DELETE FROM postel.audit_log WHERE id = ANY(ARRAY(
        SELECT id FROM postel.audit_log WHERE at < ${epochMs(request.before)}::bigint
        ORDER BY at LIMIT ${Math.max(0, request.limit)}
      ))
      RETURNING 1
    )
    SELECT count(*) AS n FROM gone`;
}
