import { hostname, userInfo } from "node:os";
import { AUDIT_ENTRY_LIMITS, type AuditDetailValue, type AuditEntryInput, isPostelError } from "@postel/core";
import { usageError } from "./exit-codes.js";
import type { Output } from "./output.js";

/** One operator action as the audit log records it (source `"cli"`, the actor added by `main`). */
export interface OperatorAction {
  /** The dashboard's and portal's names where the action is the same: `"endpoint.disable"`. */
  action: string;
  /** What it was done to (an endpoint, delivery or message id); null for many or none. */
  target: string | null;
  /** Flat facts about it, never a secret; long strings are cut to `DETAIL_TEXT` characters. */
  detail?: Record<string, AuditDetailValue | undefined>;
}

/** Where the audit log is written: `postel.outbound.auditLog`. */
export interface AuditLogWriter {
  record(entry: AuditEntryInput): Promise<unknown>;
}

/** What the CLI says in `source`. */
export const SOURCE = "cli";
/** Prefix of an actor taken from the operating system's account, not named by the operator. */
export const OS_ACTOR_PREFIX = "os:";
// Detail strings are cut here so that the longest detail (a URL and a reason) stays within 4 KiB.
const DETAIL_TEXT = 256;

/**
 * Who the audit log says acted: `--actor`, else `POSTEL_ACTOR`, as given (the name the operator goes
 * by, as in the dashboard); else the account running postel, as `os:<user>@<host>`, so the log shows
 * that nobody named themselves. An empty or over-long name is a usage error, raised before the
 * command changes anything.
 */
export function resolveActor(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const named =
    flag !== undefined ? { value: flag, from: "--actor" } : optional(env["POSTEL_ACTOR"], "POSTEL_ACTOR");
  if (named === null) return osActor();
  const max = AUDIT_ENTRY_LIMITS.actorLength;
  if (named.value.trim() === "") {
    throw usageError(`${named.from} must name who is acting (e.g. --actor ada@acme.test); it is empty.`);
  }
  if (named.value.length > max) {
    throw usageError(`${named.from} must be at most ${max} characters; it has ${named.value.length}.`);
  }
  return named.value;
}

/** `os:<user>@<host>`, cut to the audit log's limit (the host gives way first). */
export function osActor(): string {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    // A uid with no account (a container's): os.userInfo() throws.
    user = process.env["USER"] || process.env["LOGNAME"] || "unknown";
  }
  return cut(`${OS_ACTOR_PREFIX}${user}@${hostname()}`, AUDIT_ENTRY_LIMITS.actorLength);
}

/**
 * Records `action` as `actor` from the CLI. A storage without an audit log does not undo or fail
 * what was done: one warning line on stderr says it was not recorded. Any other failure to record
 * is thrown as `ActionNotRecorded`, which says that the action itself was done.
 */
export async function recordAction(
  auditLog: AuditLogWriter,
  actor: string,
  { action, target, detail }: OperatorAction,
  out: Output,
): Promise<void> {
  try {
    await auditLog.record({ actor, action, target, source: SOURCE, detail: detail ? flat(detail) : null });
  } catch (error) {
    const what = `${action}${target === null ? "" : ` ${target}`}`;
    if (isPostelError(error) && error.code === "AUDIT_LOG_UNSUPPORTED") {
      out.warning({
        code: error.code,
        message: `${what} was not recorded: this storage has no audit log.`,
      });
      return;
    }
    throw new ActionNotRecorded(what, error);
  }
}

/** The action was done, but recording it failed: reported as its cause, saying so. */
export class ActionNotRecorded extends Error {
  constructor(
    readonly what: string,
    override readonly cause: unknown,
  ) {
    super(`${what} was done, but could not be recorded in the audit log`);
  }
}

/** A URL as the audit log keeps it: a password in it (`https://user:pw@…`) as `***`. */
export function auditUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === "") return url;
    parsed.password = "***";
    return parsed.toString();
  } catch {
    return url;
  }
}

// An empty variable counts as unset, as POSTEL_DATABASE_URL does.
function optional(value: string | undefined, from: string): { value: string; from: string } | null {
  return value === undefined || value === "" ? null : { value, from };
}

// Leaves out undefined values and cuts long strings.
function flat(detail: Record<string, AuditDetailValue | undefined>): Record<string, AuditDetailValue> {
  const kept: Record<string, AuditDetailValue> = {};
  for (const [key, value] of Object.entries(detail)) {
    if (value !== undefined) kept[key] = typeof value === "string" ? cut(value, DETAIL_TEXT) : value;
  }
  return kept;
}

// At most `max` UTF-16 units, as the audit log counts, marked with "…"; never half a surrogate pair
// (the audit log refuses a lone one).
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = text.slice(0, max - 1);
  return `${/[\ud800-\udbff]$/.test(head) ? head.slice(0, -1) : head}…`;
}
