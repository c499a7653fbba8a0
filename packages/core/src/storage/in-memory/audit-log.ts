import { InvalidInputError } from "../../errors.js";
import type {
  AuditCountQuery,
  AuditLogQuery,
  AuditLogRecord,
  AuditLogStore,
  AuditPruneRequest,
} from "../storage.js";
import { smallest } from "./smallest.js";
import { compare, copy, type MemoryState } from "./state.js";

/**
 * The audit log of `InMemoryStorage`. Each verb runs synchronously, so an append and its key check
 * are one atomic step; reads scan the log, which a process holds no more of than it can scan.
 */
export function memoryAuditLog(state: MemoryState): AuditLogStore {
  const { auditEntries: entries, auditIdByKey: idByKey } = state;
  return {
    async appendAuditEntry(entry: AuditLogRecord) {
      if (entries.has(entry.id)) {
        throw new InvalidInputError(
          "INVALID_ARGUMENT",
          `An audit entry with id "${entry.id}" already exists.`,
        );
      }
      if (entry.key !== null) {
        if (idByKey.has(entry.key)) return false;
        idByKey.set(entry.key, entry.id);
      }
      entries.set(entry.id, copy(entry));
      return true;
    },

    async listAuditEntries(query: AuditLogQuery) {
      const matches = [...entries.values()].filter(
        (entry) =>
          (query.tenantId === undefined || entry.tenantId === query.tenantId) &&
          (query.action === undefined || entry.action === query.action) &&
          (query.since === undefined || entry.at >= query.since) &&
          (query.until === undefined || entry.at < query.until) &&
          (query.after === undefined || compare(entry.id, query.after) < 0),
      );
      return smallest(matches, query.limit, (a, b) => compare(b.id, a.id)).map(copy);
    },

    async countAuditEntries(query: AuditCountQuery) {
      const actions = new Set(query.actions);
      let count = 0;
      for (const entry of entries.values()) {
        if (entry.tenantId === query.tenantId && actions.has(entry.action) && entry.at >= query.since)
          count++;
      }
      return count;
    },

    async pruneAuditEntries(request: AuditPruneRequest) {
      const old = [...entries.values()].filter((entry) => entry.at < request.before);
      const doomed = smallest(old, request.limit, (a, b) => a.at - b.at || compare(a.id, b.id));
      for (const entry of doomed) {
        entries.delete(entry.id);
        if (entry.key !== null) idByKey.delete(entry.key);
      }
      return doomed.length;
    },
  };
}
