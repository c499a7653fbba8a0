#!/usr/bin/env node
// Fails the build when a workspace package's sources import each other in a cycle. Type-only imports
// count: a cycle of types still ties the files' concepts together (STYLE.md: every data path downhill).
// Prints one table, then every cycle found.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import madge from "madge";

const root = new URL("..", import.meta.url).pathname;
const tsConfig = join(root, "tsconfig.base.json");
const detective = { skipTypeImports: false };

const sources = [];
for (const group of ["packages", "apps"]) {
  for (const name of readdirSync(join(root, group)).sort()) {
    const src = join(root, group, name, "src");
    if (existsSync(src)) sources.push({ name: `${group}/${name}`, src });
  }
}

const results = await Promise.all(
  sources.map(async ({ name, src }) => {
    const graph = await madge(src, {
      fileExtensions: ["ts", "tsx"],
      tsConfig,
      detectiveOptions: { ts: detective, tsx: detective },
    });
    // A relative import madge could not resolve could hide a cycle; a package import is another package.
    const unresolved = graph.warnings().skipped.filter((path) => path.startsWith("."));
    return { name, files: Object.keys(graph.obj()).length, cycles: graph.circular(), unresolved };
  }),
);

console.table(results.map(({ name, files, cycles }) => ({ package: name, files, cycles: cycles.length })));
const problems = results.flatMap(({ name, cycles, unresolved }) => [
  ...cycles.map((cycle) => `${name}: ${[...cycle, cycle[0]].join(" > ")}`),
  ...unresolved.map((path) => `${name}: cannot resolve ${path}, so cycles through it go unseen`),
]);
if (problems.length > 0) {
  console.error(`\n${problems.map((p) => `✗ ${p}`).join("\n")}`);
  process.exit(1);
}
console.log(`No import cycle in ${results.length} packages.`);
