import { parseArgs } from "node:util";
import { parseDuration } from "@postel/signing/inbound";
import { usageError } from "./exit-codes.js";

/** One `--flag` of a command, as `parseArgs` takes it plus what `--help` prints. */
export interface OptionSpec {
  type: "string" | "boolean";
  multiple?: boolean;
  short?: string;
  /** The value's placeholder in help, e.g. `<id>`. */
  value?: string;
  description: string;
}

/** Flags every command accepts. */
export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  db: {
    type: "string",
    value: "<url|file>",
    description:
      "postgres:// URL, or a SQLite file (path, file: or libsql: URL); default $POSTEL_DATABASE_URL",
  },
  json: {
    type: "boolean",
    description: "print JSON for scripts instead of tables (a failure too, on stderr)",
  },
  actor: {
    type: "string",
    value: "<name>",
    description: "who the audit log says made a change (default $POSTEL_ACTOR, else os:<user>@<host>)",
  },
  help: { type: "boolean", short: "h", description: "show this help" },
};

/**
 * A parsed command line: typed accessors that turn a bad value into a usage error (exit 2) naming the
 * flag and what it accepts.
 */
export class Args {
  readonly #values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  readonly #positionals: string[];

  constructor(argv: string[], options: Record<string, OptionSpec>, command: string) {
    try {
      const parsed = parseArgs({
        args: argv,
        options: Object.fromEntries(
          Object.entries({ ...GLOBAL_OPTIONS, ...options }).map(([name, spec]) => [
            name,
            {
              type: spec.type,
              ...(spec.multiple ? { multiple: true } : {}),
              ...(spec.short ? { short: spec.short } : {}),
            },
          ]),
        ),
        allowPositionals: true,
        strict: true,
      });
      this.#values = parsed.values;
      this.#positionals = parsed.positionals;
    } catch (error) {
      // Node's message goes on about positionals after `--`; its first sentence is the point.
      const reason = (error instanceof Error ? error.message : String(error)).split(/(?<=\.) /)[0];
      throw usageError(`${reason} Run \`postel ${command} --help\` for its options.`);
    }
  }

  /** Whether a boolean flag was given. */
  flag(name: string): boolean {
    return this.#values[name] === true;
  }

  /** A string flag's value (the last one when repeated). */
  string(name: string): string | undefined {
    const value = this.#values[name];
    const last = Array.isArray(value) ? value.at(-1) : value;
    return typeof last === "string" ? last : undefined;
  }

  /** Every value of a repeatable flag, in order. */
  strings(name: string): string[] {
    const value = this.#values[name];
    return (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter(
      (v): v is string => typeof v === "string",
    );
  }

  /** A required string flag. */
  required(name: string): string {
    const value = this.string(name);
    if (value === undefined || value === "") throw usageError(`--${name} is required.`);
    return value;
  }

  /** A whole number in [min, max]. */
  integer(name: string, min: number, max: number): number | undefined {
    const value = this.string(name);
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min || n > max) {
      throw usageError(
        `--${name} must be a whole number from ${min} to ${max}; got ${JSON.stringify(value)}.`,
      );
    }
    return n;
  }

  /** A duration in milliseconds: "30s", "5m", "2h", "1d". */
  duration(name: string): number | undefined {
    const value = this.string(name);
    if (value === undefined) return undefined;
    const ms = parseDuration(value);
    if (ms === undefined) {
      throw usageError(
        `--${name} must be a duration like "30s", "5m", "2h" or "1d"; got ${JSON.stringify(value)}.`,
      );
    }
    return ms;
  }

  /** A point in time: ISO-8601, or a duration meaning that long ago ("5m", "1d"), or "now". */
  time(name: string, now: number): number | undefined {
    const value = this.string(name);
    if (value === undefined) return undefined;
    if (value === "now") return now;
    const ago = parseDuration(value);
    if (ago !== undefined) return now - ago;
    const at = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
    if (Number.isNaN(at)) {
      throw usageError(
        `--${name} must be an ISO time (2025-06-01T12:00:00Z) or how long ago ("30s", "5m", "2h", "1d"); got ${JSON.stringify(value)}.`,
      );
    }
    return at;
  }

  /** The positional argument at `index`, required, named `name` in the error. */
  positional(index: number, name: string): string {
    const value = this.#positionals[index];
    if (value === undefined || value === "") throw usageError(`Missing ${name}.`);
    return value;
  }

  /** Fails on positionals past the first `count`. */
  expectPositionals(count: number): void {
    const extra = this.#positionals.slice(count);
    if (extra.length > 0) throw usageError(`Unexpected argument ${JSON.stringify(extra[0])}.`);
  }
}
