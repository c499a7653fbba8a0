import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Metric } from "./stats.js";
import { median } from "./stats.js";

/**
 * `pnpm bench --baseline <ref>`: the same scenarios measured with another commit's library, in the
 * same run, alternating with this one, so that a change is compared with the code before it on the
 * same machine state (a change once looked faster against itself while it doubled the database's CPU
 * per delivery against the past). The harness is this build's for both: the same seeding, table
 * states and measurements; only the `@postel/*` packages come from the other commit (library.ts).
 */

/** A build of another commit's packages, ready to be loaded in place of this build's. */
export interface BaselineBuild {
  ref: string;
  sha: string;
  /** The worktree: its `packages/<name>/dist` replace this build's `@postel/<name>`. */
  dir: string;
}

/** The packages a scenario loads: built in the baseline worktree (those it has). */
const LIBRARY = ["core", "signing", "storage-postgres", "storage-sqlite", "dashboard", "portal"];

/**
 * Checks `ref` out in a scratch worktree (`postel-bench-baseline-<sha>` in the OS temp dir, kept and
 * reused by later runs), installs it and builds its packages there.
 */
export async function buildBaseline(ref: string, log: (line: string) => void): Promise<BaselineBuild> {
  const root = git(["rev-parse", "--show-toplevel"], process.cwd());
  const sha = git(["rev-parse", "--verify", `${ref}^{commit}`], root);
  const dir = join(tmpdir(), `postel-bench-baseline-${sha.slice(0, 12)}`);
  const marker = join(dir, ".postel-bench-library-built");
  if (existsSync(marker)) {
    log(`  baseline ${ref} (${sha.slice(0, 12)}): built before, in ${dir}`);
    return { ref, sha, dir };
  }
  if (!existsSync(dir)) {
    log(`  baseline ${ref} (${sha.slice(0, 12)}): checking it out in ${dir}`);
    git(["worktree", "add", "--detach", "--force", dir, sha], root);
  }
  log("  baseline: pnpm install (from the store when it can)…");
  await run("pnpm", ["install", "--frozen-lockfile", "--prefer-offline"], dir);
  const packages = LIBRARY.filter((name) => existsSync(join(dir, "packages", name, "package.json")));
  log(`  baseline: building its ${packages.join(", ")}…`);
  const filters = packages.map((name) => `--filter=@postel/${name}...`);
  await run("pnpm", ["turbo", "run", "build", ...filters, "--output-logs=errors-only"], dir);
  for (const name of packages) {
    if (!existsSync(join(dir, "packages", name, "dist")))
      throw new Error(`the build of ${ref} has no packages/${name}/dist`);
  }
  await writeFile(marker, `${sha}\n`);
  return { ref, sha, dir };
}

/**
 * Runs one scenario once in its own process (this bench, `--runs 1`) and returns the metrics it
 * wrote. With `library`, that process and its children load the `@postel/*` packages of that
 * worktree instead of this build's (library.ts, preloaded through NODE_OPTIONS).
 */
export async function runScenarioOnce(
  main: string,
  scenario: string,
  quick: boolean,
  library?: string,
  extra: string[] = [],
): Promise<Metric[]> {
  const args = [main, "--scenario", scenario, "--runs", "1", ...(quick ? ["--quick"] : []), ...extra];
  const env = { ...process.env };
  delete env["POSTEL_BENCH_LIBRARY"];
  if (library !== undefined) {
    const preload = `--import=${new URL("./library.js", import.meta.url).href}`;
    env["NODE_OPTIONS"] = [env["NODE_OPTIONS"], preload].filter(Boolean).join(" ");
    env["POSTEL_BENCH_LIBRARY"] = library;
  }
  const stdout = await run(process.execPath, args, process.cwd(), true, env);
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
function run(
  command: string,
  args: string[],
  cwd: string,
  capture = false,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env,
      stdio: ["ignore", capture ? "pipe" : "inherit", "inherit"],
    });
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

/** One row the guard checked: this build's figure against the baseline's. */
export interface GuardRow {
  metric: string;
  current: number;
  baseline: number;
  ratio: number;
  passed: boolean;
}

/**
 * `--guard <ratio>` (the CI guard of issue 25): every PostgreSQL CPU and WAL per delivery row of a
 * `--baseline` comparison, this build's median over the baseline's, passing when at most `limit`.
 * These two move much less than rates on a shared machine; a doubling must not land again.
 */
export function guardRows(metrics: Metric[], limit: number): GuardRow[] {
  return metrics
    .filter(
      (m) => /PostgreSQL CPU per 1,000 deliveries|WAL per delivery/.test(m.name) && m.naive !== undefined,
    )
    .map((m) => {
      const ratio = m.postel / m.naive!;
      return {
        metric: `${m.scenario}: ${m.name}`,
        current: m.postel,
        baseline: m.naive!,
        ratio,
        passed: Number.isFinite(ratio) && ratio <= limit,
      };
    });
}
