import { type ChildProcess, execFile, spawn } from "node:child_process";

/** The built binary: the tests run what `npm i -g @postel/cli` would install. */
export const BIN = new URL("../../dist/bin.js", import.meta.url).pathname;

/** What one `postel` run printed and exited with. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `postel <args>` against `database` (through POSTEL_DATABASE_URL, as a deploy would). */
export function postel(
  database: string | undefined,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: cliEnv(database, env), timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Runs `postel <args>` and parses its stdout as one JSON document, failing on a non-zero exit. */
export async function postelJson<T = Record<string, unknown>>(database: string, args: string[]): Promise<T> {
  const run = await postel(database, [...args, "--json"]);
  if (run.code !== 0) throw new Error(`postel ${args.join(" ")} exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout) as T;
}

/** Starts a long-running `postel` (tail) and collects its output as it comes. */
export function spawnPostel(database: string, args: string[]) {
  const child: ChildProcess = spawn(process.execPath, [BIN, ...args], {
    env: cliEnv(database, {}),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = { stdout: "", stderr: "" };
  child.stdout!.on("data", (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output.stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    child,
    output,
    exited,
    /** Resolves once `read(output)` is true; rejects after `ms`. */
    async until(read: (o: typeof output) => boolean, ms = 15_000): Promise<void> {
      const deadline = Date.now() + ms;
      while (!read(output)) {
        if (Date.now() > deadline)
          throw new Error(`timed out; stdout: ${output.stdout} stderr: ${output.stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

function cliEnv(database: string | undefined, extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env["PATH"], NO_COLOR: "1", ...extra };
  if (database !== undefined) env["POSTEL_DATABASE_URL"] = database;
  return env;
}
