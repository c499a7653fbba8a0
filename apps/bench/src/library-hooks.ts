import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

// Module resolution hooks for `--baseline`: in a process started with POSTEL_BENCH_LIBRARY=<worktree>
// (see library.ts), every `@postel/<name>` the bench imports resolves to that worktree's build of
// packages/<name>, so the same harness (seeding, table states, measurement) drives another commit's
// library. Imports made from inside the worktree resolve as they would there (its own links).

/** The worktree whose packages replace this build's (set by library.ts through `register`). */
let library: string | undefined;

/** Node's module.register() hands the data it was given to the hooks here. */
export function initialize(data: { library: string }): void {
  library = data.library;
}

/** What a module resolution hook receives from Node and may call on. */
interface ResolveContext {
  conditions: string[];
  parentURL?: string;
}
type NextResolve = (specifier: string, context: ResolveContext) => Promise<{ url: string }>;

/** Redirects `@postel/<name>[/<subpath>]` to packages/<name> of the baseline worktree. */
export async function resolve(specifier: string, context: ResolveContext, next: NextResolve) {
  const match = /^@postel\/([^/]+)/.exec(specifier);
  const root = library;
  if (match && root !== undefined && !context.parentURL?.startsWith(pathToFileURL(root).href)) {
    const manifest = join(root, "packages", match[1]!, "package.json");
    // Resolved as the package's own self-reference: its exports map picks the file.
    if (existsSync(manifest)) return next(specifier, { ...context, parentURL: pathToFileURL(manifest).href });
  }
  return next(specifier, context);
}
