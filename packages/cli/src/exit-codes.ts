import { ConfigurationError, InvalidInputError, isPostelError } from "@postel/core";

/** What `postel` exits with; documented in `postel --help` and the README. */
export const EXIT = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  notFound: 3,
  database: 4,
} as const;

/** The exit code table as `postel --help` prints it. */
export const EXIT_CODE_HELP = [
  "0  ok",
  "1  unexpected error",
  "2  usage error: unknown command or flag, bad value",
  "3  not found: no endpoint or message with that id",
  "4  database unreachable or not migrated (run `postel migrate`)",
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

const NOT_FOUND = new Set(["ENDPOINT_NOT_FOUND", "MESSAGE_NOT_FOUND"]);

/** How any thrown value is reported: `postel: <code>: <message>` and an exit status. */
export function describeFailure(error: unknown): { code: string; message: string; exitCode: number } {
  if (error instanceof CliError)
    return { code: error.code, message: error.message, exitCode: error.exitCode };
  if (isPostelError(error)) {
    const { code, message } = error;
    if (NOT_FOUND.has(code)) return { code, message, exitCode: EXIT.notFound };
    if (code === "STORAGE_UNAVAILABLE") return { code, message, exitCode: EXIT.database };
    if (code === "SCHEMA_MISMATCH") {
      return {
        code,
        message: `${message}\nRun \`postel migrate\` against this database first.`,
        exitCode: EXIT.database,
      };
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
