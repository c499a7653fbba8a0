import { Args } from "./args.js";
import type { Command } from "./command.js";
import { COMMANDS, GROUPS } from "./commands.js";
import { type DatabaseTarget, type OpenDatabase, openDatabase, redact, resolveTarget } from "./database.js";
import { describeFailure, EXIT, usageError } from "./exit-codes.js";
import { commandHelp, groupHelp, rootHelp } from "./help.js";
import { Output, type Stream } from "./output.js";

/** What `main` reads and writes: the process, or a test's doubles. */
export interface Io {
  stdout: Stream;
  stderr: Stream;
  env: NodeJS.ProcessEnv;
  version: string;
  /** Resolves on Ctrl-C / SIGTERM (`tail` stops then and exits 0). */
  interrupted: Promise<void>;
}

/** Runs one `postel` command line and returns its exit status. */
export async function main(argv: string[], io: Io): Promise<number> {
  const write = (stream: Stream, text: string) => stream.write(`${text}\n`);
  let target: DatabaseTarget | undefined;
  let db: OpenDatabase | undefined;
  try {
    const [first, second] = argv;
    if (first === undefined || first === "--help" || first === "-h" || first === "help") {
      write(first === undefined ? io.stderr : io.stdout, rootHelp(io.version));
      return first === undefined ? EXIT.usage : EXIT.ok;
    }
    if (first === "--version" || first === "-v") {
      write(io.stdout, io.version);
      return EXIT.ok;
    }
    let name = first;
    if (GROUPS.has(first)) {
      if (second === undefined || second.startsWith("-")) {
        write(second === "--help" || second === "-h" ? io.stdout : io.stderr, groupHelp(first));
        return second === "--help" || second === "-h" ? EXIT.ok : EXIT.usage;
      }
      name = `${first} ${second}`;
    }
    const command = find(name);
    const rest = argv.slice(name.split(" ").length);
    if (rest.includes("--help") || rest.includes("-h")) {
      write(io.stdout, commandHelp(command));
      return EXIT.ok;
    }
    const args = new Args(rest, command.options, command.name);
    const out = new Output(io.stdout, io.stderr, io.env, args.flag("json"));
    await command.run({
      args,
      out,
      now: () => Date.now(),
      interrupted: io.interrupted,
      open: async (options) => {
        target ??= resolveTarget(args.string("db"), io.env);
        db ??= await openDatabase(target, options);
        return db;
      },
    });
    return EXIT.ok;
  } catch (error) {
    const { code, message, exitCode } = describeFailure(error);
    write(io.stderr, redact(`postel: ${code}: ${message}`, target));
    return exitCode;
  } finally {
    await db?.close().catch(() => {});
  }
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
