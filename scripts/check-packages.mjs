#!/usr/bin/env node
// Checks every publishable package as npm will receive it: packs it with pnpm (publishConfig and
// `workspace:` ranges applied), lints the tarball with publint and with attw under the ESM-only
// profile (we ship no CommonJS, so attw's CJS-resolution findings do not apply), installs them all with
// plain npm into a scratch project where every README example must compile under `tsc --strict`
// (check-tarball-install.mjs), then dry-runs `pnpm publish -r`. Needs the packages built first (CI runs
// it after `pnpm test`).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const packagesDir = join(root, "packages");
const packages = readdirSync(packagesDir)
  .sort()
  .map((name) => join(packagesDir, name))
  .filter((dir) => existsSync(join(dir, "package.json")))
  .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) }))
  .filter(({ manifest }) => !manifest.private);

const out = mkdtempSync(join(tmpdir(), "postel-pack-"));
const failures = [];
const timings = [];
const tarballs = [];

function step(label, command, args, cwd) {
  console.log(`\n$ ${command} ${args.join(" ")}   (${label})`);
  const started = performance.now();
  const result = spawnSync(command, args, { cwd, stdio: "inherit" });
  timings.push({ step: label, seconds: ((performance.now() - started) / 1000).toFixed(1) });
  if (result.status !== 0) failures.push(label);
  return result.status === 0;
}

try {
  for (const { dir, manifest } of packages) {
    const dest = join(out, manifest.name.replace("@", "").replace("/", "-"));
    mkdirSync(dest);
    if (!step(`pack ${manifest.name}`, "pnpm", ["pack", "--pack-destination", dest], dir)) continue;
    const tarball = join(
      dest,
      readdirSync(dest).find((file) => file.endsWith(".tgz")),
    );
    tarballs.push(tarball);
    step(`publint ${manifest.name}`, "pnpm", ["exec", "publint", "run", tarball, "--strict"], root);
    // attw passes a package without types; publint is what fails when `exports` names a missing file.
    step(`attw ${manifest.name}`, "pnpm", ["exec", "attw", tarball, "--profile", "esm-only"], root);
  }
  if (tarballs.length === packages.length) {
    step(
      "npm install the tarballs, tsc the READMEs",
      "node",
      [join(root, "scripts/check-tarball-install.mjs"), ...tarballs],
      root,
    );
  }
  step("pnpm publish -r --dry-run", "pnpm", ["publish", "-r", "--dry-run", "--no-git-checks"], root);
} finally {
  rmSync(out, { recursive: true, force: true });
}

console.log();
console.table(timings);
if (failures.length > 0) {
  console.error(`check-packages: ${failures.length} step(s) failed: ${failures.join(", ")}`);
  process.exit(1);
}
console.log(
  `check-packages: ${packages.length} packages pack, pass publint and attw, install with npm (their README examples compile), and dry-run publish.`,
);
