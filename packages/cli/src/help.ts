import { GLOBAL_OPTIONS, type OptionSpec } from "./args.js";
import type { Command } from "./command.js";
import { COMMANDS } from "./commands.js";
import { EXIT_CODE_HELP } from "./exit-codes.js";

/** `postel --help`: every command, the database flag, exit codes. */
export function rootHelp(version: string): string {
  return [
    `postel ${version}: inspect, replay and watch Postel's webhook outbox on PostgreSQL or SQLite.`,
    "",
    "Usage: postel <command> [options]",
    "",
    "Commands:",
    ...aligned(COMMANDS.map((c) => [`${c.name}${c.operands ? ` ${c.operands.join(" ")}` : ""}`, c.summary])),
    "",
    "Options of every command:",
    ...optionLines(GLOBAL_OPTIONS),
    "  --version            print the version",
    "",
    "Database: --db <url|file> or POSTEL_DATABASE_URL: postgres://user:password@host:5432/db, or a",
    "SQLite file (./postel.db, file:./postel.db, libsql://...). Passwords are never printed.",
    "",
    "Output: tables and lines for people show control and bidi characters from the data as escapes",
    '(\\x1b, \\r, \\u202e); --json is exact JSON, and with --json a failure is {"error":{...}} on stderr.',
    "A closed pipe (postel messages list | head) ends the command quietly.",
    "",
    "Audit log: every command that changes data (and `endpoints secret`) records who did what, with",
    'source "cli": the actor is --actor, else POSTEL_ACTOR, else os:<user>@<host>. Dry runs record',
    "nothing; on a storage without an audit log a warning says it was not recorded.",
    "",
    "Exit codes:",
    ...EXIT_CODE_HELP.map((line) => `  ${line}`),
    "",
    "Run `postel <command> --help` for a command's options. Secrets are printed only by",
    "`postel endpoints secret <id>` and by --show-secret.",
  ].join("\n");
}

/** `postel endpoints --help`: the subcommands of a group. */
export function groupHelp(group: string): string {
  const members = COMMANDS.filter((c) => c.name.startsWith(`${group} `));
  return [
    `Usage: postel ${group} <command> [options]`,
    "",
    "Commands:",
    ...aligned(members.map((c) => [`${c.name}${c.operands ? ` ${c.operands.join(" ")}` : ""}`, c.summary])),
    "",
    `Run \`postel ${group} <command> --help\` for its options.`,
  ].join("\n");
}

/** `postel <command> --help`. */
export function commandHelp(command: Command): string {
  const operands = command.operands ? ` ${command.operands.join(" ")}` : "";
  const own = optionLines(command.options);
  return [
    `Usage: postel ${command.name}${operands} [options]`,
    "",
    `${command.summary}.`,
    ...(own.length > 0 ? ["", "Options:", ...own] : []),
    "",
    "Options of every command:",
    ...optionLines(GLOBAL_OPTIONS),
    ...(command.details ? ["", ...command.details] : []),
    "",
    "Exit codes:",
    ...EXIT_CODE_HELP.map((line) => `  ${line}`),
  ].join("\n");
}

function optionLines(options: Record<string, OptionSpec>): string[] {
  return aligned(
    Object.entries(options).map(([name, spec]) => [
      `${spec.short ? `-${spec.short}, ` : ""}--${name}${spec.value ? ` ${spec.value}` : ""}`,
      spec.description,
    ]),
  );
}

function aligned(rows: [string, string][]): string[] {
  const width = Math.max(19, ...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
}
