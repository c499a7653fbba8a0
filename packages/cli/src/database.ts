import { existsSync } from "node:fs";
import { type AnyEventCatalog, Postel, type PostelInstance, type Storage } from "@postel/core";
import type { InboundSources } from "@postel/core/inbound";
import type { DatabaseTarget } from "./database-target.js";
import { CliError, EXIT, usageError } from "./exit-codes.js";

export type { DatabaseTarget } from "./database-target.js";

/** An open database: a Postel instance that never starts workers, and its storage. */
export interface OpenDatabase {
  /** With `events` given to `openDatabase`, checked against that catalog (typed loosely: any catalog). */
  postel: PostelInstance<Storage<unknown>, InboundSources, AnyEventCatalog | undefined>;
  storage: Storage<unknown> & { migrate(): Promise<void> };
  target: DatabaseTarget;
  close(): Promise<void>;
}

/** Reads `--db` (or the environment) into a target, refusing what neither storage can open. */
export function resolveTarget(flag: string | undefined, env: NodeJS.ProcessEnv): DatabaseTarget {
  const value = flag ?? env["POSTEL_DATABASE_URL"];
  if (value === undefined || value === "") {
    throw usageError(
      "No database: pass --db <postgres-url|sqlite-file> or set POSTEL_DATABASE_URL (e.g. postgres://user@host/db or ./postel.db).",
    );
  }
  if (/^postgres(ql)?:\/\//i.test(value)) {
    const password = passwordOf(value);
    return { kind: "postgres", url: value, display: mask(value, password), file: null, password };
  }
  if (/^libsql:\/\//i.test(value)) {
    const password = passwordOf(value);
    return { kind: "sqlite", url: value, display: mask(value, password), file: null, password };
  }
  if (/^file:/i.test(value)) {
    const file = decodeURIComponent(
      value
        .slice("file:".length)
        .replace(/^\/\/(?=\/)/, "")
        .split("?")[0]!,
    );
    return { kind: "sqlite", url: value, display: value, file, password: null };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    throw usageError(
      `Unsupported database ${JSON.stringify(mask(value, passwordOf(value)))}: use a postgres:// URL, a SQLite file path, or a file: or libsql: URL.`,
    );
  }
  return { kind: "sqlite", url: `file:${value}`, display: value, file: value, password: null };
}

/**
 * Opens the target with migrations off, so a database that was never migrated is reported (exit 4,
 * "run `postel migrate`") instead of silently created; `create` allows it (for `postel migrate`).
 */
export async function openDatabase(
  target: DatabaseTarget,
  options: { create?: boolean; allowPrivateNetworks?: boolean; events?: AnyEventCatalog } = {},
): Promise<OpenDatabase> {
  if (target.file !== null && !options.create && !existsSync(target.file)) {
    throw new CliError(
      "STORAGE_UNAVAILABLE",
      `No SQLite database at ${target.file}. Check the path, or create it with \`postel migrate --db ${target.display}\`.`,
      EXIT.database,
    );
  }
  // Only the driver in use is loaded: a command starts in about half the time.
  const storage =
    target.kind === "postgres"
      ? (await import("@postel/storage-postgres")).PostgresStorage(
          { url: target.url },
          { migrate: false, listen: false },
        )
      : (await import("@postel/storage-sqlite")).SqliteStorage({ url: target.url }, { migrate: false });
  // Workers never start here: the CLI only reads, and writes what an operator asks for.
  // `allowPrivateNetworks` only affects the URL check of `endpoints create` (no request is sent here).
  const postel = Postel({
    outbound: {
      storage,
      http: { allowPrivateNetworks: options.allowPrivateNetworks ?? false },
      ...(options.events ? { events: options.events } : {}),
    },
  });
  return { postel, storage, target, close: () => postel.close() };
}

/** The text with the target's password (and its URL-encoded form) replaced by `***`. */
export function redact(text: string, target: DatabaseTarget | undefined): string {
  const password = target?.password;
  if (!password) return text;
  return text.split(password).join("***").split(encodeURIComponent(password)).join("***");
}

function passwordOf(value: string): string | null {
  try {
    const password = new URL(value).password;
    return password === "" ? null : decodeURIComponent(password);
  } catch {
    // Not parseable as a URL: take what sits between "user:" and "@", if anything.
    return /^[a-z]+:\/\/[^:/@]*:([^@]*)@/i.exec(value)?.[1] ?? null;
  }
}

function mask(value: string, password: string | null): string {
  if (password === null) return value;
  return value.replace(/^([a-z]+:\/\/[^:/@]*:)[^@]*@/i, "$1***@");
}
