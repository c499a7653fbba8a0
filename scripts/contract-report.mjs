#!/usr/bin/env node
// The storage contract in numbers, for a checkout (default: this one): verbs a storage must and may
// implement, names exported from each entry of @postel/core, lines of the storages, import cycles.
//   node scripts/contract-report.mjs [path-to-checkout]
import { readFileSync, existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";

const root = resolve(process.argv[2] ?? ".");
const core = join(root, "packages/core");

function program(files) {
  const config = ts.readConfigFile(join(core, "tsconfig.json"), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, core);
  return ts.createProgram(files, { ...parsed.options, noEmit: true });
}

/** Required and optional methods of an interface (its own and inherited), by name. */
function verbs(checker, type) {
  const required = [];
  const optional = [];
  for (const symbol of checker.getPropertiesOfType(type)) {
    const decl = symbol.valueDeclaration ?? symbol.declarations?.[0];
    const isMethod = decl && (ts.isMethodSignature(decl) || ts.isMethodDeclaration(decl));
    if (!isMethod) continue;
    ((symbol.flags & ts.SymbolFlags.Optional) !== 0 ? optional : required).push(symbol.name);
  }
  return { required, optional };
}

const entries = JSON.parse(readFileSync(join(core, "package.json"), "utf8")).exports;
const entryFiles = Object.entries(entries)
  .filter(([, target]) => typeof target === "object" && target["@postel/source"])
  .map(([name, target]) => [name, join(core, target["@postel/source"])]);
const storageFile = join(core, "src/storage/storage.ts");
const prog = program([storageFile, ...entryFiles.map(([, file]) => file)]);
const checker = prog.getTypeChecker();

const storageModule = checker.getSymbolAtLocation(prog.getSourceFile(storageFile));
const exported = (name) => checker.getExportsOfModule(storageModule).find((s) => s.name === name);
const storage = checker.getDeclaredTypeOfSymbol(exported("Storage"));
const whole = verbs(checker, storage);
const capabilityVerbs = {};
for (const symbol of checker.getPropertiesOfType(storage)) {
  const type = checker.getNonNullableType(checker.getTypeOfSymbol(symbol));
  if (!(type.getFlags() & ts.TypeFlags.Object) || checker.isArrayLikeType(type)) continue;
  const inner = verbs(checker, type);
  if (inner.required.length + inner.optional.length > 0 && !symbol.name.startsWith("__"))
    capabilityVerbs[symbol.name] = inner;
}

const lines = (dir, filter = () => true) => {
  let total = 0;
  const walk = (path) => {
    if (!existsSync(path)) return;
    if (statSync(path).isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
    else if (path.endsWith(".ts") && !path.endsWith(".test.ts") && filter(path))
      total += readFileSync(path, "utf8").split("\n").length;
  };
  walk(dir);
  return total;
};

console.log(`checkout: ${root}\n`);
console.log(
  `Storage verbs: ${whole.required.length} required on the storage, ${whole.optional.length} optional`,
);
for (const [name, inner] of Object.entries(capabilityVerbs))
  console.log(`  capability ${name}: ${inner.required.length} required, ${inner.optional.length} optional`);
console.log("\nNames exported per entry of @postel/core:");
console.table(
  entryFiles.map(([name, file]) => ({
    entry: name,
    names: checker.getExportsOfModule(checker.getSymbolAtLocation(prog.getSourceFile(file))).length,
  })),
);
console.log("Lines of source (tests excluded):");
console.table([
  {
    implementation: "InMemoryStorage",
    lines: lines(join(core, "src/storage/in-memory")) + lines(join(core, "src/storage/in-memory-storage.ts")),
  },
  { implementation: "@postel/storage-postgres", lines: lines(join(root, "packages/storage-postgres/src")) },
  { implementation: "@postel/storage-sqlite", lines: lines(join(root, "packages/storage-sqlite/src")) },
  { implementation: "MapStorage (delivery only)", lines: lines(join(root, "apps/example-storage/src")) },
  { implementation: "core's testing kit", lines: lines(join(core, "src/testing")) },
  { implementation: "core (all of src)", lines: lines(join(core, "src")) },
]);
