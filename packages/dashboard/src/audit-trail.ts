import { type AuditDetailValue, isPostelError } from "@postel/core";
import type { Operations } from "./ops.js";

/** One operator action, as the audit log records it (source `"dashboard"`). */
export interface OperatorAction {
  actor: string;
  /** e.g. `"endpoint.disable"`, `"secret.reveal"`, `"dead-letters.replay-all"`. */
  action: string;
  target: string | null;
  detail?: Record<string, AuditDetailValue> | null | undefined;
}

/** Where the dashboard writes what operators did, and spends the nonces of its confirmations. */
export interface AuditTrail {
  /** Records an action (nothing, on a storage without an audit log: the action still runs). */
  record(entry: OperatorAction): Promise<void>;
  /**
   * Spends a confirmation's nonce and records the action with it: true for exactly one of all the
   * calls with one nonce, however concurrent. With the audit log the nonce is the entry's unique
   * `key`, so it holds across every instance; without one it is kept in this process only.
   */
  claim(nonce: string, entry: OperatorAction): Promise<boolean>;
}

/** Nonces remembered by a process whose storage has no audit log (the oldest are forgotten first). */
const LOCAL_NONCES = 10_000;

/** The audit trail on `auditLog` (`postel.outbound.auditLog`). */
export function auditTrail(auditLog: Operations["auditLog"]): AuditTrail {
  const spent = new Set<string>();
  /** Whether the entry was written; null on a storage without an audit log. */
  const write = async (entry: OperatorAction, key: string | null): Promise<boolean | null> => {
    try {
      const { recorded } = await auditLog.record({ ...entry, source: "dashboard", key });
      return recorded;
    } catch (error) {
      if (isPostelError(error) && error.code === "AUDIT_LOG_UNSUPPORTED") return null;
      throw error;
    }
  };
  return {
    async record(entry) {
      await write(entry, null);
    },
    async claim(nonce, entry) {
      const recorded = await write(entry, `dashboard-confirm:${nonce}`);
      if (recorded !== null) return recorded;
      // No await between the check and the add: of concurrent claims in this process, one wins.
      if (spent.has(nonce)) return false;
      spent.add(nonce);
      if (spent.size > LOCAL_NONCES) spent.delete(spent.values().next().value!);
      return true;
    },
  };
}
