import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Metric } from "./stats.js";
import { median } from "./stats.js";

/**
 * `pnpm bench --baseline <ref>`: the same scenarios measured on a build of another commit, in the
 * same run, alternating with this one, so that a change is compared with the code before it on the
 * same machine state (a change once looked faster against itself while it doubled the database's CPU
 * per delivery against the past).
 */

/** A build of another commit's bench, ready to run. */
export interface BaselineBuild {
  ref: string;
  sha: string;
  /** Its `apps/bench/dist/main.js`. */
  main: string;
}

/**
 * Checks `ref` out in a scratch worktree (`postel-bench-baseline-<sha>` in the OS temp dir, kept and
 * reused by later runs), installs and builds its bench there.
 */
export async function buildBaseline(ref: string, log: (line: string) => void): Promise<BaselineBuild> {
  const root = git(["rev-parse", "--show-toplevel"], process.cwd());
  const sha = git(["rev-parse", "--verify", `${ref}^{commit}`], root);
  const dir = join(tmpdir(), `postel-bench-baseline-${sha.slice(0, 12)}`);
  const main = join(dir, "apps", "bench", "dist", "main.js");
  const marker = join(dir, ".postel-bench-built");
  if (existsSync(marker) && existsSync(main)) {
    log(`  baseline ${ref} (${sha.slice(0, 12)}): built before, in ${dir}`);
    return { ref, sha, main };
  }
  if (!existsSync(dir)) {
    log(`  baseline ${ref} (${sha.slice(0, 12)}): checking it out in ${dir}`);
    git(["worktree", "add", "--detach", "--force", dir, sha], root);
  }
  log("  baseline: pnpm install (from the store when it can)…");
  await run("pnpm", ["install", "--frozen-lockfile", "--prefer-offline"], dir);
  log("  baseline: building its bench and the packages it uses…");
  await run("pnpm", ["turbo", "run", "build", "--filter=@postel/bench...", "--output-logs=errors-only"], dir);
  if (!existsSync(main))
    throw new Error(`the build of ${ref} has no ${main}: is its apps/bench older than the bench?`);
  await writeFile(marker, `${sha}\n`);
  return { ref, sha, main };
}

/**
 * Runs one scenario once in its own process, with the bench at `main` (this one's or a baseline's),
 * and returns the metrics it wrote. Only flags every bench has had are passed (`--scenario`, `--runs`,
 * `--quick`); the results come from the JSON file it names on its last lines.
 */
export async function runScenarioOnce(main: string, scenario: string, quick: boolean): Promise<Metric[]> {
  const args = [main, "--scenario", scenario, "--runs", "1", ...(quick ? ["--quick"] : [])];
  const stdout = await run(process.execPath, args, process.cwd(), true);
  const file = /^Wrote (.+\.json)$/m.exec(stdout)?.[1];
  if (file === undefined) throw new Error(`${main} --scenario ${scenario} wrote no results file:\n${stdout}`);
  const result = JSON.parse(await readFile(file, "utf8")) as { metrics: Metric[] };
  return result.metrics;
}

/**
 * This build's runs and the baseline's, metric by metric: the Postel column is this build's median,
 * the baseline column the baseline build's (its Postel figure), every run kept.
 */
export function compareWithBaseline(current: Metric[][], baseline: Metric[][], ref: string): Metric[] {
  const key = (m: Metric) => `${m.scenario}\u0000${m.name}`;
  const runsOf = (runs: Metric[][], k: string) =>
    runs.flatMap((metrics) => metrics.filter((m) => key(m) === k).map((m) => m.postel));
  const first = new Map<string, Metric>();
  for (const metric of current.flat()) if (!first.has(key(metric))) first.set(key(metric), metric);
  const noted = new Set<string>();
  return [...first.values()].map((metric) => {
    const k = key(metric);
    const note = !noted.has(metric.scenario);
    noted.add(metric.scenario);
    const postelRuns = runsOf(current, k);
    const naiveRuns = runsOf(baseline, k);
    // The other parties (naive loop, minimal loop, peers), totals and ratio targets (which are on
    // those parties) are left out: one comparison a row.
    const { scenario, name, unit, target } = metric;
    return {
      scenario,
      name,
      unit,
      ...(target === undefined ? {} : { target }),
      postel: median(postelRuns),
      postelRuns,
      ...(naiveRuns.length > 0 ? { naive: median(naiveRuns), naiveRuns } : {}),
      // Once a scenario.
      ...(note
        ? { note: `the baseline column is a build of ${ref}, measured in the same run, alternating` }
        : {}),
    };
  });
}

function git(args: string[], cwd: string): string {
  return execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
}

/** Runs a command, its stderr passed through (progress), its stdout returned when `capture`. */
function run(command: string, args: string[], cwd: string, capture = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", capture ? "pipe" : "inherit", "inherit"] });
    let stdout = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`${command} ${args.join(" ")} exited with ${code}`)),
    );
  });
}
