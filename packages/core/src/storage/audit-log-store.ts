import type { PageRequest } from "./operations-store.js";

/** A JSON value of an audit entry's `detail`: flat, so a dashboard can show it as a table. */
export type AuditDetailValue = string | number | boolean | null;

/** One entry of the audit log: who did what to what, when. */
export interface AuditLogRecord {
  /** `aud_` + core's time-sortable id: entries list newest first by id. */
  id: string;
  /** When it was recorded (epoch ms, from Postel's clock). */
  at: number;
  tenantId: string | null;
  /** Who did it: the app's name for the user, 1 to 200 characters. */
  actor: string;
  /** What was done, e.g. `endpoint.create`: 1 to 64 of `a-z 0-9 _ . -`, starting with a letter. */
  action: string;
  /** What it was done to, e.g. an endpoint or message id (at most 200 characters); null for nothing. */
  target: string | null;
  /** Where it was done: `portal`, `dashboard`, `api` or the app's own name (same form as `action`). */
  source: string;
  /** Flat details (at most 32 keys, 4 KiB of JSON); null for none. */
  detail: Record<string, AuditDetailValue> | null;
  /**
   * Unique among the entries kept when set (at most 200 characters): a second entry with the same key
   * is not written. A pruned entry's key can be used again.
   */
  key: string | null;
}

/**
 * Filter of `listAuditEntries`. Newest first (by id), so `after` selects the entries with smaller
 * ids; `since` and `until` bound `at` (`at >= since`, `at < until`).
 */
export interface AuditLogQuery extends PageRequest {
  tenantId?: string | undefined;
  action?: string | undefined;
  since?: number | undefined;
  until?: number | undefined;
}

/** What `countAuditEntries` counts: entries of one tenant (null: tenant-less ones) with one of `actions`, at or after `since`. */
export interface AuditCountQuery {
  tenantId: string | null;
  actions: readonly string[];
  since: number;
}

/** One batch of `pruneAuditEntries`. */
export interface AuditPruneRequest {
  /** Delete entries whose `at` is before this time (epoch ms). */
  before: number;
  /** Delete at most this many. */
  limit: number;
}

/**
 * The audit log (an optional capability of `Storage`, see `Storage.auditLog`): an append-only record
 * of who did what, kept apart from the delivery history (retention and `prune()` never touch it).
 */
export interface AuditLogStore {
  /**
   * Appends the entry; returns false (writing nothing) when `key` is set and an entry with that key
   * exists. Atomic under concurrency: of any number of appends with one key, exactly one returns true
   * (a unique index and `ON CONFLICT DO NOTHING`). An id already stored fails the call.
   */
  appendAuditEntry(entry: AuditLogRecord): Promise<boolean>;
  /**
   * Entries matching the query, newest first by id, ids below `after`, at most `limit`. A page costs
   * the rows it returns (indexes on `(tenant_id, id)` and `id`), whatever the log holds.
   */
  listAuditEntries(query: AuditLogQuery): Promise<AuditLogRecord[]>;
  /**
   * How many entries of `tenantId` have one of `actions` and `at >= since` (rate limits count
   * with it); its cost is bounded by the tenant's entries since `since`. No actions: 0.
   */
  countAuditEntries(query: AuditCountQuery): Promise<number>;
  /** Deletes at most `limit` entries with `at < before`, oldest first; returns how many went. */
  pruneAuditEntries(request: AuditPruneRequest): Promise<number>;
}
