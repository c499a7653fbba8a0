import type {
  AuditCountQuery,
  AuditLogQuery,
  AuditLogRecord,
  AuditLogStore,
  AuditPruneRequest,
} from "@postel/core/storage";
import type { Db, Statement } from "../internal/database.js";
import { newestFirst } from "../internal/sql-fragments.js";
import { int, toAuditEntry, toJson } from "../internal/rows.js";

/**
 * The statement of `listAuditEntries` (exported for the plan tests). Only the filters given reach the
 * SQL, so a page walks the primary key newest first, or postel_audit_log_tenant for one tenant (SQLite
 * plans a statement once for any argument: `:tenantId IS NULL OR …` could use no index).
 */
export function listAuditEntriesStatement(query: AuditLogQuery): Statement {
  const conditions = {
    tenantId: "tenant_id = :tenantId",
    action: "action = :action",
    since: "+at >= :since",
    until: "+at < :until",
    after: "id < :after",
  };
  return newestFirst("postel_audit_log", conditions, query);
}

/** The statement of `countAuditEntries`: a range of postel_audit_log_tenant_action_at per action. */
export function countAuditEntriesStatement(query: AuditCountQuery): Statement {
  return {
    sql: `SELECT count(*) AS n FROM postel_audit_log
      WHERE tenant_id ${query.tenantId === null ? "IS NULL" : "= :tenantId"}
        AND action IN (SELECT value FROM json_each(:actions)) AND at >= :since`,
    args: {
      ...(query.tenantId === null ? {} : { tenantId: query.tenantId }),
      actions: JSON.stringify(query.actions),
      since: query.since,
    },
  };
}

/** The statement of `pruneAuditEntries`: the oldest entries before `before`, on postel_audit_log_at. */
export function pruneAuditEntriesStatement(request: AuditPruneRequest): Statement {
  return {
    sql: `DELETE FROM postel_audit_log WHERE id IN (
      SELECT id FROM postel_audit_log WHERE at < :before ORDER BY at LIMIT :limit)`,
    args: { before: request.before, limit: Math.max(0, request.limit) },
  };
}

/** The audit log: appends and prunes are write transactions of their own, reads never take the lock. */
export function auditLogStore(db: Db): AuditLogStore {
  return {
    /** Under the single writer, so of appends with one key exactly one inserts (ON CONFLICT DO NOTHING). */
    async appendAuditEntry(entry: AuditLogRecord): Promise<boolean> {
      const [inserted] = await db.write([
        {
          sql: `INSERT INTO postel_audit_log (id, at, tenant_id, actor, action, target, source, detail, key)
            VALUES (:id, :at, :tenantId, :actor, :action, :target, :source, :detail, :key)
            ON CONFLICT (key) WHERE key IS NOT NULL DO NOTHING`,
          args: {
            id: entry.id,
            at: Math.round(entry.at),
            tenantId: entry.tenantId,
            actor: entry.actor,
            action: entry.action,
            target: entry.target,
            source: entry.source,
            detail: toJson(entry.detail),
            key: entry.key,
          },
        },
      ]);
      return inserted?.rowsAffected === 1;
    },

    async listAuditEntries(query: AuditLogQuery): Promise<AuditLogRecord[]> {
      return (await db.read(listAuditEntriesStatement(query))).map(toAuditEntry);
    },

    async countAuditEntries(query: AuditCountQuery): Promise<number> {
      if (query.actions.length === 0) return 0;
      const [row] = await db.read(countAuditEntriesStatement(query));
      return row === undefined ? 0 : int(row, "n");
    },

    async pruneAuditEntries(request: AuditPruneRequest): Promise<number> {
      const [gone] = await db.write([pruneAuditEntriesStatement(request)]);
      return gone?.rowsAffected ?? 0;
    },
  };
}
