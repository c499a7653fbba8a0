import { statSync } from "node:fs";
import { isPostelError } from "@postel/core";
import type { DatabaseTarget } from "./database-target.js";

type Advice = [code: "STORAGE_UNAVAILABLE" | "STORAGE_TIMEOUT", reason: string, fix: string];

const CHECK_DB = "--db / POSTEL_DATABASE_URL";
const AGAIN = "Run the command again; if it keeps failing, check that the database server is up.";

// By the driver's code: Node's socket errors, postgres.js's own, PostgreSQL's SQLSTATE, libsql's
// SQLITE_*. What it means, and what to do about it from a shell.
const ADVICE: Record<string, Advice> = {
  ECONNREFUSED: [
    "STORAGE_UNAVAILABLE",
    "the connection was refused: nothing is listening on that host and port",
    `Start the database, or fix the host and port in ${CHECK_DB}.`,
  ],
  ENOTFOUND: ["STORAGE_UNAVAILABLE", "the host name does not resolve", `Fix the host in ${CHECK_DB}.`],
  EAI_AGAIN: [
    "STORAGE_UNAVAILABLE",
    "the host name could not be resolved (DNS is unavailable)",
    `Check this machine's DNS, or put an IP address in ${CHECK_DB}.`,
  ],
  ETIMEDOUT: [
    "STORAGE_UNAVAILABLE",
    "the server did not answer in time",
    `Check the host and port in ${CHECK_DB}, and that no firewall drops the traffic.`,
  ],
  EHOSTUNREACH: [
    "STORAGE_UNAVAILABLE",
    "the host is unreachable",
    `Check the host in ${CHECK_DB} and the network to it.`,
  ],
  ECONNRESET: ["STORAGE_UNAVAILABLE", "the connection was lost", AGAIN],
  "28P01": [
    "STORAGE_UNAVAILABLE",
    "the server refused the login",
    `Check the user and password in ${CHECK_DB}, and the server's pg_hba.conf.`,
  ],
  "28000": [
    "STORAGE_UNAVAILABLE",
    "the server refused the login",
    `Check the user in ${CHECK_DB}, and the server's pg_hba.conf.`,
  ],
  "3D000": [
    "STORAGE_UNAVAILABLE",
    "the database does not exist",
    `Fix the database name in ${CHECK_DB} (or create the database, then run \`postel migrate\`).`,
  ],
  "53300": [
    "STORAGE_UNAVAILABLE",
    "the server has no connection slots left",
    "Run the command again in a moment, or raise the server's max_connections.",
  ],
  "57014": [
    "STORAGE_TIMEOUT",
    "a query was cancelled by statement_timeout (or by an administrator)",
    "The database is busy or a lock is held: run the command again later. For a longer limit, set it " +
      `in the URL in ${CHECK_DB}, e.g. ?options=-c%20statement_timeout%3D60s.`,
  ],
  "55P03": [
    "STORAGE_TIMEOUT",
    "a lock was not granted within lock_timeout",
    "Another session holds it: run the command again later.",
  ],
  "57P01": ["STORAGE_UNAVAILABLE", "the server is shutting down", AGAIN],
  "57P03": ["STORAGE_UNAVAILABLE", "the server is not accepting connections yet", AGAIN],
  "42501": [
    "STORAGE_UNAVAILABLE",
    "this database user may not use Postel's tables (permission denied)",
    `Put the user your app connects as in ${CHECK_DB}, or GRANT this one access to the postel schema.`,
  ],
  "25006": [
    "STORAGE_UNAVAILABLE",
    "the server is read-only (a standby?)",
    `Point ${CHECK_DB} at the primary (or add target_session_attrs=primary to the URL).`,
  ],
  SQLITE_NOTADB: [
    "STORAGE_UNAVAILABLE",
    "the file is not a SQLite database",
    `Check ${CHECK_DB}: give the SQLite file your app uses, or a postgres:// URL.`,
  ],
  SQLITE_CANTOPEN: [
    "STORAGE_UNAVAILABLE",
    "the file cannot be opened",
    `Check the path in ${CHECK_DB}, and that this user may read and write the file and its directory.`,
  ],
  SQLITE_PERM: [
    "STORAGE_UNAVAILABLE",
    "permission denied",
    `Run as a user that may read and write the file and its directory, or fix ${CHECK_DB}.`,
  ],
  SQLITE_BUSY: [
    "STORAGE_TIMEOUT",
    "another process holds a lock on the database",
    "Run the command again in a moment.",
  ],
  SQLITE_CORRUPT: [
    "STORAGE_UNAVAILABLE",
    "the database file is corrupt",
    `Check that ${CHECK_DB} names the right file; restore it from a backup.`,
  ],
  SQLITE_FULL: [
    "STORAGE_UNAVAILABLE",
    "the disk is full",
    "Free space on its disk, then run the command again.",
  ],
  SQLITE_IOERR: [
    "STORAGE_UNAVAILABLE",
    "a disk I/O error occurred",
    `Check the disk, and the path in ${CHECK_DB}.`,
  ],
};
for (const [alias, code] of [
  ["CONNECT_TIMEOUT", "ETIMEDOUT"],
  ["ENETUNREACH", "EHOSTUNREACH"],
  ["EPIPE", "ECONNRESET"],
  ["CONNECTION_CLOSED", "ECONNRESET"],
  ["CONNECTION_DESTROYED", "ECONNRESET"],
  ["57P02", "57P01"],
  ["SQLITE_READONLY", "SQLITE_PERM"],
  ["SQLITE_AUTH", "SQLITE_PERM"],
  ["SQLITE_LOCKED", "SQLITE_BUSY"],
] as const) {
  ADVICE[alias] = ADVICE[code]!;
}

const POSTEL_DATABASE_CODES = new Set(["STORAGE_UNAVAILABLE", "STORAGE_TIMEOUT", "SCHEMA_MISMATCH"]);

/**
 * A failure to use the database, told in the CLI's terms (which flag to fix, `postel migrate`)
 * rather than the library's: Postel's `STORAGE_UNAVAILABLE`, `STORAGE_TIMEOUT` and `SCHEMA_MISMATCH`,
 * and any driver error (postgres.js, PostgreSQL, libsql) reaching the CLI as it is. Null for
 * anything else. The driver's own one-line message is kept in parentheses, never its stack.
 */
export function databaseFailure(
  error: unknown,
  target: DatabaseTarget,
): { code: string; message: string } | null {
  const chain = causes(error);
  const postel = chain.find((e) => isPostelError(e) && POSTEL_DATABASE_CODES.has(codeOf(e) ?? ""));
  const driver = chain.find((e) => !isPostelError(e) && codeOf(e) !== undefined);
  const driverCode = driver === undefined ? undefined : codeOf(driver);
  const where = describe(target);
  if (codeOf(postel) === "SCHEMA_MISMATCH") return schemaMismatch(postel as Error, where);
  // The driver's words for it: the coded error's, else the innermost (fetch's "bad port").
  const said = driver ?? chain.findLast((e) => e instanceof Error && !isPostelError(e));
  const detail = said instanceof Error ? ` (${said.message.split("\n")[0]})` : "";
  const advice =
    directory(target) ??
    (driverCode === undefined ? undefined : ADVICE[driverCode]) ??
    unreachableServer(target, chain) ??
    fallback(postel, driver, driverCode);
  if (advice === undefined) return null;
  const [code, reason, fix] = advice;
  return { code, message: `Could not use ${where}: ${reason}${detail}. ${fix}` };
}

function schemaMismatch(error: Error, where: string): { code: string; message: string } {
  // A database ahead of this postel (or with an edited migration): migrating again would not help.
  if (/newer|differ/.test(error.message)) {
    return {
      code: "SCHEMA_MISMATCH",
      message:
        `${where} holds migrations this postel does not ship: it was migrated by another version of Postel. ` +
        "Use the @postel/cli version that matches your app's @postel packages.",
    };
  }
  return {
    code: "SCHEMA_MISMATCH",
    message:
      `Postel's tables are missing or out of date in ${where}. ` +
      "Run `postel migrate` against this database first (same --db), or start your app if it migrates at startup.",
  };
}

// A SQLite path that is a directory: libsql only says it cannot open it.
function directory(target: DatabaseTarget): Advice | undefined {
  if (target.file === null || statSync(target.file, { throwIfNoEntry: false })?.isDirectory() !== true) {
    return undefined;
  }
  return [
    "STORAGE_UNAVAILABLE",
    "that path is a directory, not a database file",
    `Give the SQLite file in ${CHECK_DB}, e.g. ${target.file.replace(/\/?$/, "/postel.db")}.`,
  ];
}

// libsql's client reaches its server with fetch(), which fails with a TypeError and no code for a
// port it will not use (e.g. 1) or an unknown scheme.
function unreachableServer(target: DatabaseTarget, chain: unknown[]): Advice | undefined {
  if (target.kind !== "sqlite" || target.file !== null) return undefined;
  if (!chain.some((e) => e instanceof TypeError && e.message === "fetch failed")) return undefined;
  return [
    "STORAGE_UNAVAILABLE",
    "the server could not be reached",
    `Start it, or fix the host and port in ${CHECK_DB}.`,
  ];
}

// Postel's own outage errors, a PostgreSQL error (it has a severity) or a libsql one with no advice
// of its own.
function fallback(postel: unknown, driver: unknown, driverCode: string | undefined): Advice | undefined {
  const postgres = typeof (driver as { severity?: unknown } | undefined)?.severity === "string";
  if (postel === undefined && !postgres && !driverCode?.startsWith("SQLITE_")) return undefined;
  const code = codeOf(postel) === "STORAGE_TIMEOUT" ? "STORAGE_TIMEOUT" : "STORAGE_UNAVAILABLE";
  const reason = postel === undefined ? "the database failed the query" : "it could not be reached or opened";
  return [code, reason, `Check ${CHECK_DB}. ${AGAIN}`];
}

// The host and port (and database) of a URL, or the SQLite file: never the password.
function describe(target: DatabaseTarget): string {
  if (target.file !== null) return `the SQLite database ${target.file}`;
  let url: URL;
  try {
    url = new URL(target.url);
  } catch {
    return target.kind === "postgres" ? `PostgreSQL at ${target.display}` : `libsql at ${target.display}`;
  }
  if (target.kind === "sqlite") return `the libsql server at ${url.host}`;
  const database = decodeURIComponent(url.pathname.slice(1));
  return `PostgreSQL at ${url.hostname}:${url.port || "5432"}${database ? `, database "${database}"` : ""}`;
}

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current !== undefined && current !== null && chain.length < 6; ) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === "string" && code !== "" ? code : undefined;
}
