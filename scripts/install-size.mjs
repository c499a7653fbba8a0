#!/usr/bin/env node
// What a user's node_modules weighs for the three ways Postel is used: a receiver (Express), a
// Postgres sender and a SQLite sender. Each profile's packed @postel tarballs are installed with plain
// npm into a scratch project, next to the framework or driver the user chooses anyway; that package
// is also installed alone, and the difference is Postel's part. Run by hand, not in CI:
//   node scripts/install-size.mjs [--ref <git-ref>]...
// Every --ref is built in a temporary worktree and measured before the working tree, so
// `--ref <older commit>` prints before and after side by side. Results go to
// apps/bench/results/install-size-<timestamp>.json (git-ignored).
import { execFileSync, spawnSync } from "node:child_process";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const root = new URL("..", import.meta.url).pathname;
const { values } = parseArgs({ options: { ref: { type: "string", multiple: true, default: [] } } });
const started = performance.now();
const progress = (line) =>
  console.log(`[install-size ${((performance.now() - started) / 1000).toFixed(1)}s] ${line}`);
const scratch = mkdtempSync(join(tmpdir(), "postel-install-size-"));

function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, encoding: "utf8" });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} failed in ${cwd}:\n${result.stdout}${result.stderr}`);
  }
  return result.stdout;
}

// The packages a user adds besides ours: the non-@postel names of the README's install line, so the
// profiles follow what the docs tell users to type.
function clientsOf(readme) {
  const line = readFileSync(join(root, readme), "utf8").match(/^pnpm add (.*)$/m)?.[1];
  if (line === undefined) throw new Error(`${readme} has no "pnpm add" line`);
  return line
    .replace(/#.*/, "")
    .trim()
    .split(/\s+/)
    .filter((name) => !name.startsWith("@postel/"));
}

// Our packages a user adds: the @postel names of the same line, in the measured checkout's README (a
// receiver needed @postel/core before the gate moved to @postel/signing).
function oursOf(checkout, readme) {
  const line = readFileSync(join(checkout, readme), "utf8").match(/^pnpm add (.*)$/m)?.[1] ?? "";
  return line.split(/\s+/).filter((name) => name.startsWith("@postel/"));
}

const profiles = [
  { name: "receiver", readme: "packages/adapter-express/README.md" },
  { name: "postgres sender", readme: "packages/storage-postgres/README.md" },
  { name: "sqlite sender", readme: "packages/storage-sqlite/README.md" },
].map((profile) => ({ ...profile, clients: clientsOf(profile.readme) }));

function npmInstall(specs) {
  const dir = mkdtempSync(join(scratch, "project-"));
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "scratch", private: true })}\n`);
  run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", ...specs], dir);
  return dir;
}

// Every installed package, nested ones included: each node_modules/<name> and
// node_modules/@scope/<name> that has a package.json, walked recursively.
function installedPackages(nodeModules, found = new Map()) {
  let entries;
  try {
    entries = readdirSync(nodeModules);
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (entry.startsWith(".")) continue;
    const dirs = entry.startsWith("@")
      ? readdirSync(join(nodeModules, entry)).map((name) => join(nodeModules, entry, name))
      : [join(nodeModules, entry)];
    for (const dir of dirs) {
      if (lstatSync(dir).isSymbolicLink()) continue;
      let manifest;
      try {
        manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      } catch {
        continue;
      }
      found.set(dir, `${manifest.name}@${manifest.version}`);
      installedPackages(join(dir, "node_modules"), found);
    }
  }
  return found;
}

// du's KiB: disk usage (blocks, what the disk holds) and apparent size (the bytes of the files).
const du = (dir, ...flags) =>
  Number(execFileSync("du", ["-sk", ...flags, dir], { encoding: "utf8" }).split("\t")[0]);

function measure(dir) {
  const nodeModules = join(dir, "node_modules");
  const where = installedPackages(nodeModules);
  return {
    where,
    packages: [...where.values()].sort(),
    diskKiB: du(nodeModules),
    apparentKiB: du(nodeModules, "--apparent-size"),
  };
}

// The client alone, at the version npm picks today; profiles then install that exact version, so
// every source is measured against the same client.
const clientBaselines = new Map();
for (const profile of profiles) {
  const key = profile.clients.join(" ");
  if (clientBaselines.has(key)) continue;
  progress(`installing ${key} alone`);
  const dir = npmInstall(profile.clients);
  const pins = profile.clients.map((name) => {
    const { version } = JSON.parse(readFileSync(join(dir, "node_modules", name, "package.json"), "utf8"));
    return `${name}@${version}`;
  });
  const { packages, diskKiB, apparentKiB } = measure(dir);
  clientBaselines.set(key, { pins, packages, diskKiB, apparentKiB });
}

// Packs every publishable package of a checkout after building it; returns name -> tarball path.
function pack(checkout, label) {
  progress(`${label}: building packages/*`);
  run("pnpm", ["turbo", "run", "build", "--filter", "./packages/*", "--output-logs=errors-only"], checkout);
  const destination = mkdtempSync(join(scratch, "tarballs-"));
  const tarballs = new Map();
  for (const entry of readdirSync(join(checkout, "packages"))) {
    const dir = join(checkout, "packages", entry);
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    if (manifest.private) continue;
    progress(`${label}: packing ${manifest.name}`);
    const before = new Set(readdirSync(destination));
    run("pnpm", ["pack", "--pack-destination", destination], dir);
    const tarball = readdirSync(destination).find((file) => !before.has(file));
    tarballs.set(manifest.name, join(destination, tarball));
  }
  return tarballs;
}

// The profile's packages and every @postel package they depend on, so npm never asks the registry
// for one of ours (they are not published).
function closure(names, tarballs) {
  const needed = new Set();
  const visit = (name) => {
    if (needed.has(name)) return;
    const tarball = tarballs.get(name);
    if (tarball === undefined) throw new Error(`no tarball for ${name}`);
    needed.add(name);
    const manifest = JSON.parse(run("tar", ["-xzOf", tarball, "package/package.json"], scratch));
    const dependencies = { ...manifest.dependencies, ...manifest.peerDependencies };
    for (const dependency of Object.keys(dependencies)) {
      if (dependency.startsWith("@postel/")) visit(dependency);
    }
  };
  for (const name of names) visit(name);
  return [...needed].map((name) => tarballs.get(name));
}

function measureCheckout(checkout, label) {
  const tarballs = pack(checkout, label);
  const rows = [];
  for (const profile of profiles) {
    const baseline = clientBaselines.get(profile.clients.join(" "));
    const ours = oursOf(checkout, profile.readme);
    progress(`${label}: installing the ${profile.name} (${ours.join(", ")}, ${baseline.pins.join(", ")})`);
    const dir = npmInstall([...closure(ours, tarballs), ...baseline.pins]);
    const measured = measure(dir);
    const clientPackages = new Set(baseline.packages);
    // Where Postel's part goes: each added package's own size, without nested node_modules.
    const added = [...measured.where]
      .filter(([, name]) => !clientPackages.has(name))
      .map(([where, name]) => ({ name, apparentKiB: du(where, "--apparent-size", "--exclude=node_modules") }))
      .sort((a, b) => b.apparentKiB - a.apparentKiB);
    rows.push({
      profile: profile.name,
      clients: baseline.pins,
      packages: measured.packages.length,
      diskKiB: measured.diskKiB,
      apparentKiB: measured.apparentKiB,
      postel: {
        packages: measured.packages.length - baseline.packages.length,
        diskKiB: measured.diskKiB - baseline.diskKiB,
        apparentKiB: measured.apparentKiB - baseline.apparentKiB,
        added,
      },
    });
  }
  return rows;
}

function measureRef(ref) {
  const commit = run("git", ["rev-parse", "--short", `${ref}^{commit}`], root).trim();
  const label = ref === commit ? commit : `${ref} (${commit})`;
  const worktree = join(scratch, `worktree-${commit}`);
  progress(`${label}: adding a worktree at ${worktree}`);
  run("git", ["worktree", "add", "--detach", worktree, commit], root);
  try {
    progress(`${label}: pnpm install`);
    try {
      run("pnpm", ["install", "--frozen-lockfile", "--offline"], worktree);
    } catch {
      progress(`${label}: the store lacks packages; pnpm install online`);
      run("pnpm", ["install", "--frozen-lockfile"], worktree);
    }
    return { source: label, commit, rows: measureCheckout(worktree, label) };
  } finally {
    progress(`${label}: removing the worktree`);
    run("git", ["worktree", "remove", "--force", worktree], root);
  }
}

const head = run("git", ["rev-parse", "--short", "HEAD"], root).trim();
const dirty = run("git", ["status", "--porcelain", "--", "packages"], root).trim() !== "";
const sources = [];
try {
  for (const ref of values.ref) sources.push(measureRef(ref));
  const label = `working tree (HEAD ${head}${dirty ? ", packages/ modified" : ""})`;
  sources.push({ source: label, commit: head, dirty, rows: measureCheckout(root, label) });
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

// One line per profile, a column group per source: all packages and MB, then Postel's part.
const mb = (kib) => (kib / 1024).toFixed(1);
const header = ["profile", ...sources.map((source) => source.source)];
const lines = profiles.map((profile) => [
  `${profile.name} (+ ${clientBaselines.get(profile.clients.join(" ")).pins.join(", ")})`,
  ...sources.map((source) => {
    const row = source.rows.find((candidate) => candidate.profile === profile.name);
    return `${row.packages} pkgs, ${mb(row.diskKiB)} MB; Postel: +${row.postel.packages} pkgs, +${mb(row.postel.diskKiB)} MB (${mb(row.postel.apparentKiB)} MB apparent)`;
  }),
]);
const widths = header.map((_, column) => Math.max(...[header, ...lines].map((line) => line[column].length)));
const format = (line) => `| ${line.map((cell, column) => cell.padEnd(widths[column])).join(" | ")} |`;
console.log();
console.log(format(header));
console.log(format(widths.map((width) => "-".repeat(width))));
for (const line of lines) console.log(format(line));
console.log();
for (const source of sources) {
  for (const row of source.rows) {
    console.log(
      `${source.source}, ${row.profile}: Postel adds ${row.postel.added.map(({ name, apparentKiB }) => `${name} ${mb(apparentKiB)} MB`).join(", ") || "nothing"}`,
    );
  }
}
console.log(
  "\npackages: every node_modules/<name> and node_modules/@scope/<name> with a package.json, nested ones included;" +
    " MB: du -sk of node_modules (disk usage); Postel's part: minus the client installed alone.",
);

const results = join(root, "apps/bench/results");
mkdirSync(results, { recursive: true });
const file = join(results, `install-size-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
writeFileSync(
  file,
  `${JSON.stringify({ node: process.version, npm: run("npm", ["--version"], tmpdir()).trim(), clients: Object.fromEntries(clientBaselines), sources }, null, 2)}\n`,
);
progress(`wrote ${file.slice(root.length)}`);
