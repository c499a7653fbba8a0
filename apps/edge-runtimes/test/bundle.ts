import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";

/** How a runtime wants its bundle: the package.json conditions it resolves, and the module's shape. */
export interface Target {
  name: string;
  conditions: string[];
  /** `esm`: the fixture's `export default { fetch }`; `iife`: a script that listens for fetch events. */
  format: "esm" | "iife";
  /** Code around the fixture (`worker` is its default export); none to bundle the fixture as is. */
  wrapper?: string;
}

/** A bundle on disk, with the Node built-ins it still imports (which none may). */
export interface Bundle {
  file: string;
  code: string;
  nodeImports: string[];
  /** Deletes the bundle's temporary directory. */
  remove(): void;
}

const FIXTURES = new URL("../fixtures/", import.meta.url).pathname;
const NODE_BUILTINS = new Set(builtinModules);

/**
 * Bundles `fixtures/<fixture>` for one runtime with esbuild: workspace packages from their sources
 * (the `@postel/source` condition, as the tests run them), then the runtime's own conditions, and no
 * Node polyfill. A Node built-in is left as an import so the runtime itself shows what it does with
 * it; `nodeImports` lists them for the test that forbids them.
 */
export async function bundle(fixture: string, target: Target): Promise<Bundle> {
  const name = target.format === "esm" ? "worker.mjs" : "worker.js";
  const entry = target.wrapper
    ? {
        stdin: {
          contents: `import worker from ${JSON.stringify(`./${fixture}`)};\n${target.wrapper}`,
          resolveDir: FIXTURES,
          sourcefile: `${target.name}-entry.ts`,
          loader: "ts" as const,
        },
      }
    : { entryPoints: [join(FIXTURES, fixture)] };
  const result = await build({
    ...entry,
    bundle: true,
    write: false,
    outfile: name,
    format: target.format,
    platform: "neutral",
    target: "es2022",
    conditions: ["@postel/source", ...target.conditions],
    mainFields: ["module", "main"],
    external: ["node:*", ...NODE_BUILTINS],
    metafile: true,
    logLevel: "silent",
  });
  const code = result.outputFiles[0]!.text;
  const dir = mkdtempSync(join(tmpdir(), `postel-edge-${target.name}-`));
  const file = join(dir, name);
  writeFileSync(file, code);
  // What the output imports (tree-shaken code's imports are gone from it).
  const nodeImports = Object.values(result.metafile.outputs)
    .flatMap((output) => output.imports)
    .map((imported) => imported.path)
    .filter((path) => path.startsWith("node:") || NODE_BUILTINS.has(path));
  return {
    file,
    code,
    nodeImports: [...new Set(nodeImports)].sort(),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
