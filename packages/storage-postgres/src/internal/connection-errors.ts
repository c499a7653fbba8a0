import { isPostelError, StorageUnavailableError } from "@postel/core/storage";
import type { Sql } from "postgres";

// Why a connection could not be made or was lost, and what to do about it, by the socket error code
// (Node), the postgres.js connection code, or the SQLSTATE of a FATAL server error.
const REASONS: Record<string, [reason: string, fix: string]> = {
  ECONNREFUSED: [
    "the connection was refused: nothing is listening on that host and port",
    "Start PostgreSQL there, or fix the host and port in the connection string (or your pool's options).",
  ],
  ENOTFOUND: [
    "the host name does not resolve",
    "Fix the host in the connection string (or your pool's options).",
  ],
  EAI_AGAIN: ["the host name could not be resolved (DNS is unavailable)", "Check this machine's DNS."],
  ETIMEDOUT: [
    "the server did not answer in time",
    "Check the host and port, and that no firewall drops the traffic.",
  ],
  CONNECT_TIMEOUT: [
    "the server did not answer in time",
    "Check the host and port, and that no firewall drops the traffic.",
  ],
  EHOSTUNREACH: ["the host is unreachable", "Check the host, and the network between this process and it."],
  ENETUNREACH: ["the network is unreachable", "Check the host, and the network between this process and it."],
  CONNECTION_ENDED: [
    "the pool was already ended (close() or sql.end() was called)",
    "Keep the pool open while Postel uses it: close Postel first (postel.close()), then your pool.",
  ],
  "28P01": [
    "the server refused the login",
    "Check the user and password in the connection string, and the server's pg_hba.conf.",
  ],
  "28000": [
    "the server refused the login",
    "Check the user in the connection string and the server's pg_hba.conf.",
  ],
  "3D000": [
    "the database does not exist",
    "Create it (CREATE DATABASE) or fix the database name in the connection string.",
  ],
  "53300": [
    "the server has no connection slots left",
    "Lower your pools' `max`, or raise the server's max_connections.",
  ],
  // A hot standby (or a primary being demoted) answers writes, FOR UPDATE and LISTEN with 25006.
  "25006": [
    "connected to a read-only server, a standby?",
    "Postel treats the session as lost: it drops the connections it opened and reconnects. Point the " +
      "connection at the primary: list every host with target_session_attrs=primary " +
      "(postgres://h1,h2/app?target_session_attrs=primary), or use an address that follows the primary. " +
      "A pool of your own ({ sql } or { db }) must be reconnected by you.",
  ],
};

// The connection was lost mid-use (a restart, a network blip, an idle connection killed): postgres.js
// reconnects on the next query, and Postel's workers retry by themselves.
const LOST = new Set(["ECONNRESET", "EPIPE", "CONNECTION_CLOSED", "CONNECTION_DESTROYED"]);
const LOST_FIX =
  "Postel's workers retry by themselves; if it lasts, check that the server is up and reachable.";

/**
 * Whether `error` ended the session that ran the query: the socket closed or reset, postgres.js
 * destroyed the connection, or the server sent a FATAL error before closing it (an administrator's
 * `pg_terminate_backend`, a shutdown). A statement sent on it may or may not have committed.
 */
export function isSessionLost(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  if (isPostelError(error)) {
    // Postel's own wrapping of such a failure keeps the driver's error as its cause.
    return code === "STORAGE_UNAVAILABLE" && isSessionLost((error as { cause?: unknown }).cause);
  }
  return (typeof code === "string" && LOST.has(code)) || severity === "FATAL" || severity === "PANIC";
}

/** Whether the server answered read-only (SQLSTATE 25006): the session is on a standby, not the primary. */
export function isReadOnlyServer(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "25006";
}

/**
 * Rethrows a failure to reach the database (refused, unresolvable, timed out, login or database
 * refused, connection lost) as `StorageUnavailableError` naming the host and port tried and the fix;
 * the driver's error stays as `cause`. Anything else (Postel's own errors included) is returned as is.
 */
export function asConnectionError(error: unknown, sql: Sql): unknown {
  if (typeof error !== "object" || error === null || isPostelError(error)) return error;
  const { code, severity, message } = error as { code?: unknown; severity?: unknown; message?: unknown };
  if (typeof code !== "string") return error;
  const fatal = severity === "FATAL" || severity === "PANIC";
  const known =
    REASONS[code] ??
    (LOST.has(code) || code.startsWith("08") ? ["the connection was lost", LOST_FIX] : undefined);
  if (!known && !fatal) return error;
  const [reason, fix] = known ?? ["the server refused or closed the connection", LOST_FIX];
  const detail = typeof message === "string" && message !== "" ? ` (${message})` : "";
  return new StorageUnavailableError(
    `Could not use PostgreSQL at ${target(error, sql)}: ${reason}${detail}. ${fix}`,
    { cause: error },
  );
}

/** `host:port, database "x", user "y"` from the error (socket errors name the address) or the pool. */
function target(error: object, sql: Sql): string {
  const { address, port } = error as { address?: unknown; port?: unknown };
  const options = (sql as Partial<Sql>).options;
  let where: string;
  if (typeof address === "string" && address !== "") {
    where = port === undefined ? address : `${address}:${String(port)}`;
  } else if (options?.path) {
    where = options.path;
  } else {
    const ports = options?.port ?? [];
    where = (options?.host ?? []).map((host, i) => `${host}:${ports[i] ?? ports[0] ?? 5432}`).join(", ");
  }
  const database = options?.database ? `, database "${options.database}"` : "";
  const user = options?.user ? `, user "${options.user}"` : "";
  return `${where || "(unknown host)"}${database}${user}`;
}
