import { Args } from "./args.js";
import type { Command, Context } from "./command.js";
import { COMMANDS, GROUPS } from "./commands.js";
import { type DatabaseTarget, type OpenDatabase, openDatabase, redact, resolveTarget } from "./database.js";
import { describeFailure, EXIT, usageError } from "./exit-codes.js";
import { commandHelp, groupHelp, rootHelp } from "./help.js";
import { Output, type Stream } from "./output.js";
import { ActionNotRecorded, recordAction, resolveActor } from "./record-action.js";

/** What `main` reads and writes: the process, or a test's doubles. */
export interface Io {
  stdout: Stream;
  stderr: Stream;
  env: NodeJS.ProcessEnv;
  version: string;
  /** Resolves on Ctrl-C / SIGTERM (`tail` stops then and exits 0). */
  interrupted: Promise<void>;
  /** Where answers to confirmations come from: nobody is asked unless it and stderr are terminals. */
  stdin?: { isTTY?: boolean };
  /** Reads one line of stdin (null at its end). */
  readLine?: () => Promise<string | null>;
  /**
   * Opens `--db` (default: PostgreSQL or SQLite, as the target says). Tests of features a database
   * storage does not have yet hand in a Postel on `InMemoryStorage`.
   */
  openDatabase?: typeof openDatabase;
}

/** Runs one `postel` command line and returns its exit status. */
export async function main(argv: string[], io: Io): Promise<number> {
  // Known before the flags are parsed, so a usage error is reported as JSON too.
  const out = new Output(io.stdout, io.stderr, io.env, wantsJson(argv));
  let target: DatabaseTarget | undefined;
  let db: OpenDatabase | undefined;
  try {
    const [first, second] = argv;
    if (first === undefined || first === "--help" || first === "-h" || first === "help") {
      const help = rootHelp(io.version).split("\n");
      if (first === undefined) out.note(...help);
      else out.text(...help);
      return first === undefined ? EXIT.usage : EXIT.ok;
    }
    if (first === "--version" || first === "-v") {
      out.text(io.version);
      return EXIT.ok;
    }
    let name = first;
    if (GROUPS.has(first)) {
      if (second === undefined || second.startsWith("-")) {
        const asked = second === "--help" || second === "-h";
        if (!asked && out.json) {
          throw usageError(`Missing the ${first} command. Run \`postel ${first} --help\` for its commands.`);
        }
        const help = groupHelp(first).split("\n");
        if (asked) out.text(...help);
        else out.note(...help);
        return asked ? EXIT.ok : EXIT.usage;
      }
      name = `${first} ${second}`;
    }
    const command = find(name);
    const rest = argv.slice(name.split(" ").length);
    if (rest.includes("--help") || rest.includes("-h")) {
      out.text(...commandHelp(command).split("\n"));
      return EXIT.ok;
    }
    const args = new Args(rest, command.options, command.name);
    // Before anything changes; --actor is checked on any command, where it is given.
    const flag = args.string("actor");
    const actor = command.audited || flag !== undefined ? resolveActor(flag, io.env) : undefined;
    const open = async (options?: Parameters<Context["open"]>[0]) => {
      target ??= resolveTarget(args.string("db"), io.env);
      db ??= await (io.openDatabase ?? openDatabase)(target, options);
      return db;
    };
    await command.run({
      args,
      out,
      now: () => Date.now(),
      interrupted: io.interrupted,
      confirm: async (question) => {
        if (io.stdin?.isTTY !== true || io.stderr.isTTY !== true || io.readLine === undefined) return null;
        out.ask(`${question} [y/N] `);
        return /^\s*y(es)?\s*$/i.test((await io.readLine()) ?? "");
      },
      open,
      record: async (action) => {
        if (!command.audited) throw new Error(`${command.name} records actions but is not marked audited`);
        await recordAction((await open()).postel.outbound.auditLog, actor!, action, out);
      },
    });
    return EXIT.ok;
  } catch (error) {
    const unrecorded = error instanceof ActionNotRecorded ? error : null;
    const failure = describeFailure(unrecorded ? unrecorded.cause : error, target);
    const message = unrecorded ? `${unrecorded.message}: ${failure.message}` : failure.message;
    out.failure({ ...failure, message: redact(message, target) });
    return failure.exitCode;
  } finally {
    await db?.close().catch(() => {});
  }
}

/** Whether `--json` is on the command line (before a `--` that ends the flags). */
function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf("--");
  return (end < 0 ? argv : argv.slice(0, end)).includes("--json");
}

function find(name: string): Command {
  const command = COMMANDS.find((c) => c.name === name);
  if (command) return command;
  const group = name.split(" ")[0]!;
  const hint = GROUPS.has(group)
    ? `Run \`postel ${group} --help\` for its commands.`
    : "Run `postel --help` for the commands.";
  throw usageError(`Unknown command ${JSON.stringify(name)}. ${hint}`);
}
