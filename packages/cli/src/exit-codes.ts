import { ConfigurationError, InvalidInputError, isPostelError } from "@postel/core";
import type { DatabaseTarget } from "./database-target.js";
import { databaseFailure } from "./database-failure.js";

/** What `postel` exits with; documented in `postel --help` and the README. */
export const EXIT = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  notFound: 3,
  database: 4,
  checkFailed: 5,
} as const;

/** The exit code table as `postel --help` prints it. */
export const EXIT_CODE_HELP = [
  "0  ok",
  "1  unexpected error",
  "2  usage error: unknown command or flag, bad value",
  "3  not found: no endpoint, message or delivery with that id, or the ordering key is not held",
  "4  database unreachable or not migrated, or another database failure: the message says what to do",
  "5  check failed: a threshold of `postel check` was crossed",
];

/** A failure the CLI itself detected, with the code it prints and the status it exits with. */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** A command line that cannot be run as written (exit 2). */
export function usageError(message: string): CliError {
  return new CliError("USAGE", message, EXIT.usage);
}

const NOT_FOUND = new Set(["ENDPOINT_NOT_FOUND", "MESSAGE_NOT_FOUND", "DELIVERY_NOT_FOUND", "KEY_NOT_HELD"]);

// The library's advice names its API; the CLI's names its commands and flags.
const CLI_WORDING: [RegExp, string][] = [
  [/; list them with endpoints\.list\(\)\./, "; list them with `postel endpoints list`."],
  [/; send\(\) returns the id to use\./, "; list them with `postel messages list`."],
  [
    /A message's deliveries are listed by messages\.deliveries\(id\)\./,
    "`postel messages show <id>` lists a message's deliveries.",
  ],
  [/ orderingKeys\.held\(\) lists the held keys\./, " List the held keys with `postel keys held`."],
  [/pass `outbound: \{ http: \{ allowPrivateNetworks: true \} \}`/, "pass --allow-private-networks"],
  [/; use null for the default in outbound\.limits/g, '; or "default" for the app\'s own setting'],
  [
    /^cursor (.*) is not a cursor of .*$/s,
    "--cursor $1 is not a cursor of this listing: pass the one the previous page printed, unchanged.",
  ],
];

/** A failure as `postel` reports it: its code, what to do, and the status it exits with. */
export interface Failure {
  code: string;
  message: string;
  exitCode: number;
}

/**
 * How any thrown value is reported (`postel: <code>: <message>`, or JSON) and the status it exits
 * with. With the database open (`target`), every database failure is exit 4 in the CLI's words.
 */
export function describeFailure(error: unknown, target?: DatabaseTarget): Failure {
  if (error instanceof CliError)
    return { code: error.code, message: error.message, exitCode: error.exitCode };
  const database = target === undefined ? null : databaseFailure(error, target);
  if (database !== null) return { ...database, exitCode: EXIT.database };
  if (isPostelError(error)) {
    const { code } = error;
    const message = CLI_WORDING.reduce((text, [from, to]) => text.replace(from, to), error.message);
    if (NOT_FOUND.has(code)) return { code, message, exitCode: EXIT.notFound };
    if (code === "STORAGE_UNAVAILABLE" || code === "STORAGE_TIMEOUT" || code === "SCHEMA_MISMATCH") {
      return { code, message, exitCode: EXIT.database };
    }
    const badInput =
      error instanceof InvalidInputError ||
      error instanceof ConfigurationError ||
      code === "EVENT_SCHEMA_NOT_EXPRESSIBLE";
    return { code, message, exitCode: badInput ? EXIT.usage : EXIT.unexpected };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { code: "UNEXPECTED", message, exitCode: EXIT.unexpected };
}
