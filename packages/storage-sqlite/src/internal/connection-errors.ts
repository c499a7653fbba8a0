import { existsSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { ConfigurationError, isPostelError, StorageUnavailableError } from "@postel/core/storage";

/**
 * Why `createClient({ url })` threw, as a Postel error: a file that cannot be opened (libsql's
 * `ConnectionFailed(… 14)`, SQLITE_CANTOPEN) is `StorageUnavailableError` naming the path and the
 * fix; a URL libsql refuses (`URL_INVALID`, `URL_PARAM_NOT_SUPPORTED`, …) is a `ConfigurationError`.
 */
export function openFailure(error: unknown, url: string, what: string): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && code.startsWith("URL_")) {
    // Not kept as the cause, nor quoted whole: the URL may carry an auth token or a password.
    const reason = error instanceof Error ? error.message.split(url).join("<url>") : code;
    return new ConfigurationError(
      [{ path: "url", message: `libsql cannot open it (${reason}); use a path or "file:path/to/postel.db"` }],
      what,
    );
  }
  return asConnectionError(error, url);
}

/**
 * A database that cannot be opened or reached, as `StorageUnavailableError` (cause: the driver's
 * error): a local file SQLite cannot open (at `url`, when known), or a libsql server nothing answers
 * at. Anything else is returned as is.
 */
export function asConnectionError(error: unknown, url?: string): unknown {
  if (isPostelError(error)) return error;
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const { code, address, port } = current as { code?: unknown; address?: unknown; port?: unknown };
    // libsql reports SQLITE_CANTOPEN while opening as `ConnectionFailed("… local database <path>: 14")`.
    const opening = /ConnectionFailed\(".*? database (.*): 14"\)/.exec(current.message);
    if (opening || code === "SQLITE_CANTOPEN") {
      return cannotOpen(error, (url === undefined ? undefined : pathOf(url)) ?? opening?.[1]);
    }
    const reason = typeof code === "string" ? NETWORK[code] : undefined;
    if (reason) {
      const where =
        typeof address === "string" ? ` at ${address}${port === undefined ? "" : `:${String(port)}`}` : "";
      return new StorageUnavailableError(
        `Could not reach the libsql server${where}: ${reason} (${current.message}). ` +
          "Start it, or fix the host and port in `url` (or in your client's URL).",
        { cause: error },
      );
    }
    current = current.cause;
  }
  return error;
}

const NETWORK: Record<string, string> = {
  ECONNREFUSED: "the connection was refused, so nothing is listening there",
  ENOTFOUND: "the host name does not resolve",
  ETIMEDOUT: "it did not answer in time",
  EHOSTUNREACH: "the host is unreachable",
  ECONNRESET: "the connection was lost",
};

function cannotOpen(error: unknown, path: string | undefined): StorageUnavailableError {
  const file = path === undefined ? "" : ` at ${resolve(path)}`;
  const directory = path === undefined ? undefined : dirname(resolve(path));
  const reason =
    path !== undefined && existsSync(path) && statSync(path).isDirectory()
      ? "that path is a directory, not a database file. Point `url` at a file inside it, e.g. postel.db"
      : directory !== undefined && !existsSync(directory)
        ? `its directory ${directory} does not exist. Create it first, or fix \`url\``
        : "check that this process may read and write the file and its directory, or fix `url`";
  return new StorageUnavailableError(`Could not open the SQLite database${file}: ${reason}.`, {
    cause: error,
  });
}

/** The file path in a `file:` URL (or a bare path); undefined for remote and in-memory databases. */
function pathOf(url: string): string | undefined {
  const path = url.replace(/^file:(?:\/\/(?=\/))?/, "").replace(/\?.*$/, "");
  if (path === url && /^[a-z][a-z0-9+.-]+:/i.test(url)) return undefined;
  return path === "" || path === ":memory:" ? undefined : path;
}
