#!/usr/bin/env node
// Installs the packed @postel tarballs into a scratch project outside the workspace with plain npm,
// as a user would, and compiles every TypeScript block of the root and package READMEs there with
// `tsc --strict`: no workspace links, no `@postel/source` condition, only what the tarballs ship.
// The clients the blocks import (and the tarballs' peers) are installed at the versions the workspace
// has installed. check-packages.mjs runs it on its tarballs:
//   node scripts/check-tarball-install.mjs <tarball>...
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ts from "typescript";

const root = new URL("..", import.meta.url).pathname;
const tarballs = process.argv.slice(2);
if (tarballs.length === 0) {
  console.error("usage: node scripts/check-tarball-install.mjs <tarball>...");
  process.exit(2);
}
const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)}s`;
const progress = (line) => console.log(`[tarball-install ${elapsed()}] ${line}`);

// apps/docs-check's parser, so both checks agree on what a block, a fragment and a prelude are. Node 20
// cannot load TypeScript, and the module only imports node:fs and node:path, so it runs from a data URL.
const parser = ts.transpileModule(
  readFileSync(join(root, "apps/docs-check/test/markdown-blocks.ts"), "utf8"),
  {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  },
).outputText;
const { codeBlocks, readmes } = await import(`data:text/javascript,${encodeURIComponent(parser)}`);
// apps/ are private programs, and a private package is not on npm yet: npm users read the root and
// the published packages' READMEs (docs-check compiles every README inside the workspace).
const isPrivatePackage = (file) => {
  const manifest = join(file, "..", "package.json");
  return (
    file.startsWith(join(root, "packages/")) &&
    existsSync(manifest) &&
    JSON.parse(readFileSync(manifest, "utf8")).private === true
  );
};
const blocks = readmes(root)
  .filter((file) => !file.startsWith(join(root, "apps/")) && !isPrivatePackage(file))
  .flatMap((file) => codeBlocks(root, file));

const manifests = tarballs.map((tarball) =>
  JSON.parse(spawnSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" }).stdout),
);
const ours = new Set(manifests.map((manifest) => manifest.name));

// What a user installs next to our packages: the packages the blocks import, the tarballs' required
// peers (npm would otherwise pick their latest), each with its @types package when the workspace has one.
const packageOf = (specifier) =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");
const clients = new Set();
for (const { code } of blocks) {
  for (const [, specifier] of code.matchAll(/(?:from|import)\s+"([^"./][^"]*)"/g)) {
    if (!specifier.startsWith("node:")) clients.add(packageOf(specifier));
  }
}
for (const manifest of manifests) {
  for (const peer of Object.keys(manifest.peerDependencies ?? {})) {
    if (!manifest.peerDependenciesMeta?.[peer]?.optional) clients.add(peer);
  }
}
for (const name of ours) clients.delete(name);

// The version the workspace installed (the lockfile's), from the first workspace package that has it.
const workspaceDirs = [
  join(root, "apps/docs-check"),
  root,
  ...readdirSync(join(root, "packages")).map((name) => join(root, "packages", name)),
];
function installedVersion(name) {
  for (const dir of workspaceDirs) {
    const manifest = join(dir, "node_modules", name, "package.json");
    if (existsSync(manifest)) return JSON.parse(readFileSync(manifest, "utf8")).version;
  }
  return undefined;
}
const installs = [];
const missing = [];
for (const name of [...clients, "typescript", "@types/node"]) {
  const version = installedVersion(name);
  if (version === undefined) missing.push(name);
  else installs.push(`${name}@${version}`);
  const types = `@types/${name.replace("@", "").replace("/", "__")}`;
  const typesVersion = name.startsWith("@types/") ? undefined : installedVersion(types);
  if (typesVersion !== undefined) installs.push(`${types}@${typesVersion}`);
}
if (missing.length > 0) {
  console.error(
    `check-tarball-install: no workspace package has ${missing.join(", ")} installed; add them to apps/docs-check's devDependencies.`,
  );
  process.exit(1);
}

const scratch = mkdtempSync(join(tmpdir(), "postel-npm-"));
let failed = false;
try {
  writeFileSync(
    join(scratch, "package.json"),
    JSON.stringify({ name: "postel-readme-check", private: true, type: "module" }, null, 2),
  );
  writeFileSync(
    join(scratch, "tsconfig.json"),
    JSON.stringify(
      {
        compilerOptions: {
          strict: true,
          module: "nodenext",
          moduleResolution: "nodenext",
          target: "es2022",
          noEmit: true,
          // Our .d.ts files are checked too, against the clients' real types. drizzle-orm 0.45's own
          // .d.ts do not pass (~70 errors: dialects whose drivers are absent, TS2344/TS2515 in its query
          // builders), with or without Postel, so errors inside other packages are counted, not failed.
          skipLibCheck: false,
          types: ["node"],
        },
        include: ["readme/*.ts"],
      },
      null,
      2,
    ),
  );

  // One command, so the packages' `@postel/*` dependencies resolve to the tarballs beside them.
  // Nothing is run, so no install scripts; --prefer-offline reuses npm's cache. Under `pnpm run`, the
  // environment carries pnpm's npm_config_* settings: a user's npm would not see them.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
  progress(`npm install: ${tarballs.length} tarballs + ${installs.join(" ")} in ${scratch}`);
  const npm = spawnSync(
    "npm",
    ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", ...tarballs, ...installs],
    { cwd: scratch, env, stdio: "inherit" },
  );
  if (npm.status !== 0) throw new Error(`npm install exited with ${npm.status}`);

  // Every copy of a @postel package in the tree must be one of the tarballs, never a registry download.
  const lock = JSON.parse(readFileSync(join(scratch, "package-lock.json"), "utf8"));
  const notLocal = Object.entries(lock.packages)
    .filter(([path]) => /node_modules\/@postel\//.test(path))
    .filter(([, entry]) => !entry.resolved?.startsWith("file:"))
    .map(([path, entry]) => `${path} (${entry.resolved ?? "unresolved"})`);
  if (notLocal.length > 0) throw new Error(`@postel packages not from the tarballs: ${notLocal.join(", ")}`);

  mkdirSync(join(scratch, "readme"));
  for (const block of blocks) writeFileSync(join(scratch, "readme", `${block.slug}.ts`), block.code);
  progress(`tsc --strict over ${blocks.length} README blocks`);
  const tsc = spawnSync("npx", ["--no", "--", "tsc", "-p", ".", "--pretty", "false"], {
    cwd: scratch,
    env,
    encoding: "utf8",
  });
  if (tsc.status !== 0 && tsc.stdout.trim() === "") throw new Error(`tsc did not run:\n${tsc.stderr}`);

  // A block's file line N is its README's line (fence + N): fragments are wrapped on their first line.
  const errors = new Map();
  const elsewhere = [];
  const thirdParty = new Map();
  let last = elsewhere;
  for (const line of tsc.stdout.split("\n").filter(Boolean)) {
    if (/^\s/.test(line)) {
      last.push(line); // the continuation of a multi-line message
      continue;
    }
    const library = /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(line)?.[1];
    if (library !== undefined && !library.startsWith("@postel/")) {
      thirdParty.set(library, (thirdParty.get(library) ?? 0) + 1);
      last = [];
      continue;
    }
    const match = /^readme\/([\w.-]+)\.ts\((\d+),\d+\): (.*)$/.exec(line);
    const block = match && blocks.find((candidate) => candidate.slug === match[1]);
    if (!block) {
      elsewhere.push(line);
      last = elsewhere;
      continue;
    }
    last = errors.get(block) ?? [];
    last.push(`${block.file}:${block.line + Number(match[2])}: ${match[3]}`);
    errors.set(block, last);
  }
  for (const file of new Set(blocks.map((block) => block.file))) {
    const ofFile = blocks.filter((block) => block.file === file);
    const broken = ofFile.filter((block) => errors.has(block));
    console.log(`  ${file}: ${ofFile.length - broken.length}/${ofFile.length} blocks compile`);
    for (const block of broken) for (const error of errors.get(block)) console.log(`    ${error}`);
  }
  if (elsewhere.length > 0) console.log(`  outside the blocks:\n    ${elsewhere.join("\n    ")}`);
  for (const [library, count] of thirdParty)
    console.log(`  (not ours: ${count} errors in ${library}'s .d.ts)`);
  failed = errors.size > 0 || elsewhere.length > 0;
} catch (error) {
  console.error(`check-tarball-install: ${error.message}`);
  failed = true;
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

if (failed) {
  console.error(
    `check-tarball-install: README blocks do not compile against the npm-installed tarballs (${elapsed()}).`,
  );
  process.exit(1);
}
progress(`${blocks.length} README blocks compile under tsc --strict against the npm-installed tarballs.`);
