import * as v from "valibot";
import type { Clock } from "../clock.js";
import type { OutboundConfig } from "../config/resolved.js";
import { DEFAULT_PRUNE_BATCH } from "../config/schemas.js";
import { type Duration, parseDuration } from "../duration.js";
import { PostelError } from "../errors.js";
import type { IdGenerator } from "../ids.js";
import type { AuditLogRecord, AuditLogStore } from "../storage/storage.js";
import { type AuditEntryInput, fieldsOf, nameSchema, parseAuditEntry } from "./audit-entry-input.js";
import {
  cursorSchema,
  decodeCursor,
  filterTextSchema,
  limitSchema,
  type Page,
  parseOptions,
  timeSchema,
  toPage,
} from "./page.js";

/** An entry of the audit log as `auditLog.list()` returns it. */
export type AuditEntry = AuditLogRecord;

/** Filters of `auditLog.list()`. Newest first. */
export interface ListAuditEntriesOptions {
  tenantId?: string | undefined;
  action?: string | undefined;
  /** Entries recorded at or after this time. */
  since?: Date | number | undefined;
  /** Entries recorded before this time. */
  until?: Date | number | undefined;
  /** Page size: 1 to 1000, default 100. */
  limit?: number | undefined;
  /** The `nextCursor` of the previous page; omit for the first page. */
  cursor?: string | undefined;
}

/** What `auditLog.count()` counts: one tenant's (null: tenant-less) entries of some actions since a time. */
export interface CountAuditEntriesOptions {
  tenantId: string | null;
  /** 1 to 64 actions. */
  actions: readonly string[];
  /** Entries recorded at or after this time. */
  since: Date | number;
}

/** `postel.outbound.auditLog`: who did what to what, and when, kept by the storage. */
export interface AuditLogApi {
  /**
   * Appends an entry, recorded now. With a `key` already recorded nothing is written and `recorded`
   * is false (of concurrent calls with one key, exactly one records): a one-time nonce store.
   * `id` is the id the entry was given (when `recorded` is false, no entry has it). Bad input throws
   * `InvalidInputError` `INVALID_AUDIT_ENTRY` naming every bad field, and writes nothing.
   * @example
   * await postel.outbound.auditLog.record({
   *   tenantId: "acme", actor: "ada@acme.test", action: "endpoint.create", target: endpoint.id, source: "portal",
   * });
   */
  record(entry: AuditEntryInput): Promise<{ id: string; recorded: boolean }>;
  /**
   * Entries, newest first, one page at a time: pass `nextCursor` back as `cursor` for the next page
   * (keyset paging on the id, so entries recorded meanwhile never shift the pages).
   * @example
   * const { items } = await postel.outbound.auditLog.list({ tenantId: "acme", limit: 50 });
   */
  list(options?: ListAuditEntriesOptions): Promise<Page<AuditEntry>>;
  /**
   * How many entries of `tenantId` have one of `actions` since `since`: a per-tenant rate limit.
   * @example
   * const hour = await postel.outbound.auditLog.count({
   *   tenantId: "acme", actions: ["endpoint.create"], since: Date.now() - 3_600_000,
   * });
   */
  count(options: CountAuditEntriesOptions): Promise<number>;
  /**
   * Deletes the entries recorded longer ago than `olderThan`, a batch at a time, until none is
   * left. Not part of `outbound.prune()` or retention: the audit log is kept for as long as you say.
   * @example
   * const { entries } = await postel.outbound.auditLog.prune({ olderThan: "365d" });
   */
  prune(options: { olderThan: Duration }): Promise<{ entries: number }>;
}

const actionsSchema = v.pipe(
  v.array(nameSchema("each action", '"endpoint.create"'), "actions must be an array of actions"),
  v.minLength(1, 'actions must list at least one action, e.g. ["endpoint.create"]'),
  v.maxLength(64, "actions must list at most 64 actions"),
);

const ListSchema = v.strictObject({
  tenantId: v.optional(filterTextSchema),
  action: v.optional(filterTextSchema),
  since: v.optional(timeSchema),
  until: v.optional(timeSchema),
  limit: limitSchema,
  cursor: cursorSchema,
});

const CountSchema = v.strictObject(
  {
    // Required, so a rate limit never counts the tenant-less entries by leaving it out.
    tenantId: v.nullable(filterTextSchema),
    actions: actionsSchema,
    since: timeSchema,
  },
  fieldsOf("count() takes { tenantId, actions, since } (tenantId null counts the tenant-less entries)"),
);

const PruneSchema = v.strictObject(
  {
    olderThan: v.custom<Duration>(
      (value) => parseDuration(value) !== undefined,
      'olderThan must be a duration such as "365d" or a number of milliseconds',
    ),
  },
  fieldsOf('prune() takes { olderThan }, e.g. { olderThan: "365d" }'),
);

/** Builds `postel.outbound.auditLog` on the storage's optional `auditLog` capability. */
export function createAuditLogApi(deps: {
  config: OutboundConfig;
  clock: Clock;
  newId: IdGenerator;
}): AuditLogApi {
  const { storage } = deps.config;
  const store = (): AuditLogStore => {
    if (storage.auditLog !== undefined) return storage.auditLog;
    throw new PostelError(
      "AUDIT_LOG_UNSUPPORTED",
      `The ${storage.name} storage has no audit log (Storage.auditLog), which postel.outbound.auditLog and the portal need. ` +
        "InMemoryStorage, PostgresStorage (@postel/storage-postgres) and SqliteStorage (@postel/storage-sqlite) have one; " +
        "a storage of your own can implement AuditLogStore (runStorageConformance checks it).",
    );
  };
  return {
    async record(input) {
      const log = store();
      const fields = parseAuditEntry(input);
      const at = deps.clock.now();
      const id = deps.newId("aud");
      return { id, recorded: await log.appendAuditEntry({ id, at, ...fields }) };
    },
    async list(options) {
      const log = store();
      const call = "auditLog.list()";
      const { cursor, limit, ...filters } = parseOptions(ListSchema, options, call);
      const after = decodeCursor(cursor, "audit-log", call);
      const rows = await log.listAuditEntries({ ...filters, limit: limit + 1, after });
      return toPage(
        rows,
        limit,
        "audit-log",
        (row) => row.id,
        (row) => row,
      );
    },
    async count(options) {
      const log = store();
      const { tenantId, actions, since } = parseOptions(CountSchema, options, "auditLog.count()");
      return log.countAuditEntries({ tenantId, actions, since });
    },
    async prune(options) {
      const log = store();
      const { olderThan } = parseOptions(PruneSchema, options, "auditLog.prune()");
      const before = deps.clock.now() - parseDuration(olderThan)!;
      let entries = 0;
      for (;;) {
        const deleted = await log.pruneAuditEntries({ before, limit: DEFAULT_PRUNE_BATCH });
        entries += deleted;
        if (deleted < DEFAULT_PRUNE_BATCH) return { entries };
      }
    },
  };
}
