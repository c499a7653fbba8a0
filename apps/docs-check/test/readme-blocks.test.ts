import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { beforeAll, describe, expect, test } from "vitest";
import { type CodeBlock, codeBlocks, readmes } from "./markdown-blocks.js";

const root = new URL("../../../", import.meta.url).pathname;
const generated = new URL("../.generated/", import.meta.url).pathname;
const blocks = readmes(root).flatMap((file) => codeBlocks(root, file));
let diagnostics = new Map<string, string[]>();

beforeAll(() => {
  rmSync(generated, { recursive: true, force: true });
  mkdirSync(generated, { recursive: true });
  for (const block of blocks) writeFileSync(join(generated, `${block.slug}.ts`), block.code);
  writeFileSync(
    join(generated, "tsconfig.json"),
    JSON.stringify({
      extends: "../../../tsconfig.base.json",
      compilerOptions: { lib: ["ES2023", "DOM"] },
      include: ["*.ts"],
    }),
  );
  diagnostics = typecheck();
  // One tsc over every README block: about 20 s on a quiet machine, minutes at CI's load.
}, 600_000);

/** One `tsc` over every block; errors grouped by block. */
function typecheck(): Map<string, string[]> {
  const result = spawnSync(
    "pnpm",
    ["exec", "tsc", "-p", join(generated, "tsconfig.json"), "--pretty", "false"],
    {
      cwd: join(generated, ".."),
      encoding: "utf8",
    },
  );
  const byFile = new Map<string, string[]>();
  for (const line of result.stdout.split("\n")) {
    const match = /([\w.-]+)\.ts\((\d+),\d+\): (.*)/.exec(line);
    if (!match) continue;
    const list = byFile.get(match[1]!) ?? [];
    list.push(`line ${match[2]}: ${match[3]}`);
    byFile.set(match[1]!, list);
  }
  return byFile;
}

const where = (block: CodeBlock) => `${block.file}:${block.line}`;

describe("README code blocks", () => {
  test("there are blocks to check", () => {
    expect(blocks.length).toBeGreaterThan(5);
  });

  test.each(blocks.map((block) => [where(block), block] as const))("%s compiles", (_where, block) => {
    expect(diagnostics.get(block.slug) ?? []).toEqual([]);
  });

  const runnable = blocks.filter((block) => block.run);
  test.each(runnable.map((block) => [where(block), block] as const))(
    "%s runs and exits 0",
    (_where, block) => {
      const js = ts.transpileModule(block.code, {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      }).outputText;
      const file = join(generated, `${block.slug}.mjs`);
      writeFileSync(file, js);
      execFileSync(process.execPath, [file], { cwd: generated, stdio: "pipe", timeout: 45_000 });
    },
  );
});
