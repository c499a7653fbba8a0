import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

/** One fenced TypeScript block of a README. */
export interface CodeBlock {
  /** `README.md` or `packages/core/README.md`. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** `ts run` blocks are executed as well as compiled. */
  run: boolean;
  code: string;
  /** A file-system-safe name, unique per block. */
  slug: string;
}

/** Every README of the repository: the root, and one per package and app. */
export function readmes(root: string): string[] {
  const files = [join(root, "README.md")];
  for (const group of ["packages", "apps"]) {
    for (const name of readdirSync(join(root, group)).sort()) {
      const readme = join(root, group, name, "README.md");
      if (existsSync(readme)) files.push(readme);
    }
  }
  return files;
}

/**
 * The ```ts / ```typescript blocks of a markdown file (```ts run marks a runnable one). A block with
 * no `import` is a fragment: it is checked as the body of a function, after the file's prelude, an
 * HTML comment `<!-- docs-check:prelude ... -->` holding the imports and `declare`s fragments use.
 */
export function codeBlocks(root: string, path: string): CodeBlock[] {
  const file = relative(root, path);
  const text = readFileSync(path, "utf8");
  const prelude = /<!-- docs-check:prelude\n([\s\S]*?)-->/.exec(text)?.[1] ?? "";
  const lines = text.split("\n");
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(ts|typescript)(\s+run)?\s*$/.exec(lines[i]!);
    if (!fence) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i]!.startsWith("```"); i++) body.push(lines[i]!);
    const slug = `${file.replace(/[^a-z0-9]+/gi, "_")}_L${start + 1}`;
    const code = `${body.join("\n")}\n`;
    const fragment = !/^import\s/m.test(code);
    // A fragment runs inside a function after the prelude, all on the block's first line, so error
    // line numbers still match the block and a fragment may shadow a name the prelude declares.
    const full = fragment
      ? `${prelude.replaceAll("\n", " ")} export async function fragment() {${code}}\n`
      : code;
    blocks.push({ file, line: start + 1, run: Boolean(fence[2]), code: full, slug });
  }
  return blocks;
}
