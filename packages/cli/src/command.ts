import type { AnyEventCatalog } from "@postel/core";
import type { Args, OptionSpec } from "./args.js";
import type { OpenDatabase } from "./database.js";
import type { Output } from "./output.js";
import type { OperatorAction } from "./record-action.js";

/** What a command runs with: its arguments, where to print, and the database on demand. */
export interface Context {
  args: Args;
  out: Output;
  /**
   * Opens `--db` (once); `create` lets `migrate` create a SQLite file that does not exist yet, and
   * `allowPrivateNetworks` lets `endpoints create` take a URL on a private address, and `events`
   * (the app's catalog) checks what `endpoints send-test` sends.
   */
  open(options?: {
    create?: boolean;
    allowPrivateNetworks?: boolean;
    events?: AnyEventCatalog;
  }): Promise<OpenDatabase>;
  /** Milliseconds since the epoch (relative `--since` values count back from it). */
  now(): number;
  /** Resolves when the user presses Ctrl-C (SIGINT) or the process is asked to stop (SIGTERM). */
  interrupted: Promise<void>;
  /**
   * Asks the person at the terminal a yes/no question (on stderr): true for yes. Null when stdin or
   * stderr is not a terminal: nobody to ask, so the command needs its `--yes`.
   */
  confirm(question: string): Promise<boolean | null>;
  /**
   * Writes what the command just did to the audit log (source `"cli"`, as `--actor`): only commands
   * marked `audited` may, once their change is made (a dry run records nothing).
   */
  record(action: OperatorAction): Promise<void>;
}

/** One `postel` command: its name, help and what it does. */
export interface Command {
  /** `"migrate"`, `"endpoints list"`. */
  name: string;
  /** One line for the command list. */
  summary: string;
  /** Positional arguments as help shows them, e.g. `["<id>"]`. */
  operands?: string[];
  options: Record<string, OptionSpec>;
  /** Extra help: what the command prints, examples. */
  details?: string[];
  /**
   * It changes data (or reveals a secret) and records that in the audit log: the actor is resolved,
   * and a bad one refused (exit 2), before it runs.
   */
  audited?: boolean;
  run(context: Context): Promise<void>;
}

/** Limit and cursor flags of every paginated listing. */
export const PAGE_OPTIONS: Record<string, OptionSpec> = {
  limit: { type: "string", value: "<n>", description: "at most this many rows (1 to 1000, default 100)" },
  cursor: {
    type: "string",
    value: "<cursor>",
    description: "the next page: the cursor the previous page printed",
  },
};

/** Reads `--limit` (default 100, at most 1000). */
export function pageLimit(args: Args): number {
  return args.integer("limit", 1, 1000) ?? 100;
}

/** Prints how to get the next page (stderr, so a piped table stays clean). */
export function nextPageHint(out: Output, nextCursor: string | null): void {
  if (nextCursor !== null) out.note(`More: run the same command with --cursor ${nextCursor}`);
}
