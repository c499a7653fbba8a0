import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

// The installed `postel` binary of @postel/cli, run as an operator would.
const manifest = createRequire(import.meta.url).resolve("@postel/cli/package.json");
const bin = join(dirname(manifest), "dist/bin.js");

/** Runs `postel <args>` on the database and returns what it printed (stdout, then stderr) and its status. */
export function runCli(args: string[], database: string): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [bin, ...args], {
    encoding: "utf8",
    env: { ...process.env, POSTEL_DATABASE_URL: database },
    timeout: 30_000,
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}`.trimEnd() };
}
