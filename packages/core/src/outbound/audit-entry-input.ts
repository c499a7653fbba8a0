import * as v from "valibot";
import { toConfigurationIssues } from "../config/schemas.js";
import { InvalidInputError } from "../errors.js";
import { unstorable } from "../storable-text.js";
import type { AuditDetailValue, AuditLogRecord } from "../storage/storage.js";

/** What `auditLog.record()` takes; `id` and `at` are Postel's (its id generator and clock). */
export interface AuditEntryInput {
  tenantId?: string | null | undefined;
  /** Who did it: the app's name for the user, 1 to 200 characters. */
  actor: string;
  /** What was done, e.g. `"endpoint.create"`: 1 to 64 of `a-z 0-9 _ . -`, starting with a letter. */
  action: string;
  /** What it was done to, e.g. an endpoint id: 1 to 200 characters, or null. */
  target?: string | null | undefined;
  /** Where: `"portal"`, `"dashboard"`, `"api"` or the app's own name (same form as `action`). */
  source: string;
  /** Flat details: at most 32 keys of strings, finite numbers, booleans or null, 4 KiB of JSON. */
  detail?: Record<string, AuditDetailValue> | null | undefined;
  /** A unique key (1 to 200 characters): an entry with a key already recorded is not written. */
  key?: string | null | undefined;
}

/** Bounds of an audit entry (`record()` refuses more with `INVALID_AUDIT_ENTRY`). */
export const AUDIT_ENTRY_LIMITS = {
  actorLength: 200,
  nameLength: 64,
  targetLength: 200,
  keyLength: 200,
  tenantIdLength: 255,
  detailKeys: 32,
  /** `detail` serialised as JSON, in UTF-8 bytes. */
  detailBytes: 4 * 1024,
} as const;

const NAME = /^[a-z][a-z0-9_.-]*$/;

const storableText = (field: string, max: number) =>
  v.pipe(
    v.string(`${field} must be a string`),
    v.minLength(1, `${field} must not be empty`),
    v.maxLength(max, `${field} must be at most ${max} characters`),
    v.check(
      (text: string) => unstorable(text) === null,
      `${field} must be well-formed text (no NUL character, no lone surrogate)`,
    ),
  );

/** An action or source: a letter, then `a-z 0-9 _ . -`, at most 64 characters. */
export const nameSchema = (field: string, example: string) =>
  v.pipe(
    v.string(`${field} must be a string such as ${example}`),
    v.regex(NAME, `${field} must start with a letter and use only a-z, 0-9 and "_ . -", e.g. ${example}`),
    v.maxLength(
      AUDIT_ENTRY_LIMITS.nameLength,
      `${field} must be at most ${AUDIT_ENTRY_LIMITS.nameLength} characters`,
    ),
  );

/** The message of an object schema: a missing field is required (with what to pass), else the object is wrong. */
export const fieldsOf =
  (what: string) =>
  (issue: v.BaseIssue<unknown>): string =>
    issue.expected?.startsWith('"') ? `is required: ${what}` : `must be an object: ${what}`;

const AuditEntrySchema = v.strictObject(
  {
    tenantId: v.optional(v.nullable(storableText("tenantId", AUDIT_ENTRY_LIMITS.tenantIdLength)), null),
    actor: storableText("actor", AUDIT_ENTRY_LIMITS.actorLength),
    action: nameSchema("action", '"endpoint.create"'),
    target: v.optional(v.nullable(storableText("target", AUDIT_ENTRY_LIMITS.targetLength)), null),
    source: nameSchema("source", '"portal"'),
    detail: v.optional(v.nullable(v.unknown()), null),
    key: v.optional(v.nullable(storableText("key", AUDIT_ENTRY_LIMITS.keyLength)), null),
  },
  fieldsOf("an entry has actor, action and source, and optionally tenantId, target, detail and key"),
);

/** Why `detail` cannot be stored, as `{ path, message }` problems (none when it can). */
function detailProblems(detail: unknown): { path: string; message: string }[] {
  if (detail === null) return [];
  const proto = typeof detail === "object" ? Object.getPrototypeOf(detail) : undefined;
  if (proto !== Object.prototype && proto !== null) {
    return [
      {
        path: "detail",
        message: "must be a plain object of strings, numbers, booleans or nulls (or null for none)",
      },
    ];
  }
  const entries = Object.entries(detail as object);
  const problems: { path: string; message: string }[] = [];
  if (entries.length > AUDIT_ENTRY_LIMITS.detailKeys) {
    problems.push({
      path: "detail",
      message: `has ${entries.length} keys; at most ${AUDIT_ENTRY_LIMITS.detailKeys}: keep the rest in your own tables`,
    });
  }
  for (const [key, value] of entries) {
    const path = `detail.${key}`;
    const keyReason = unstorable(key);
    if (keyReason !== null) problems.push({ path, message: `key ${keyReason}` });
    if (typeof value === "string") {
      const reason = unstorable(value);
      if (reason !== null) problems.push({ path, message: reason });
    } else if (typeof value === "number") {
      if (!Number.isFinite(value))
        problems.push({ path, message: "must be a finite number (JSON has no NaN or Infinity)" });
    } else if (typeof value !== "boolean" && value !== null) {
      problems.push({
        path,
        message:
          "must be a string, number, boolean or null: detail is flat (put a nested value's id or a summary here)",
      });
    }
  }
  if (problems.length === 0) {
    const bytes = Buffer.byteLength(JSON.stringify(detail), "utf8");
    if (bytes > AUDIT_ENTRY_LIMITS.detailBytes) {
      problems.push({
        path: "detail",
        message: `is ${bytes} bytes of JSON; at most ${AUDIT_ENTRY_LIMITS.detailBytes}: keep large data in your own tables and store its id`,
      });
    }
  }
  return problems;
}

/** Validates `record()` input into the fields of an entry, throwing `INVALID_AUDIT_ENTRY` with every problem. */
export function parseAuditEntry(input: unknown): Omit<AuditLogRecord, "id" | "at"> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw invalidEntry([
      {
        path: "",
        message:
          "record() takes an entry object: { actor, action, source, tenantId?, target?, detail?, key? }",
      },
    ]);
  }
  const result = v.safeParse(AuditEntrySchema, input);
  const problems = result.success
    ? []
    : toConfigurationIssues(result.issues).map((issue) =>
        issue.message === "unknown option (check the spelling)"
          ? {
              ...issue,
              message: "unknown field; an entry has tenantId, actor, action, target, source, detail and key",
            }
          : issue,
      );
  problems.push(...detailProblems((input as { detail?: unknown }).detail ?? null));
  if (!result.success || problems.length > 0) throw invalidEntry(problems);
  const { detail, ...fields } = result.output;
  return { ...fields, detail: detail === null ? null : { ...(detail as Record<string, AuditDetailValue>) } };
}

function invalidEntry(problems: { path: string; message: string }[]): InvalidInputError {
  const lines = problems.map((p) => `  - ${p.path || "(entry)"}: ${p.message}`).join("\n");
  return new InvalidInputError("INVALID_AUDIT_ENTRY", `Invalid audit entry:\n${lines}`);
}
