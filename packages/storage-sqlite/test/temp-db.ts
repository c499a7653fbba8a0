import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A fresh directory under the OS temp dir and a database path in it; `remove()` deletes both. */
export function tempDatabase(name = "postel.db"): { dir: string; path: string; url: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "postel-sqlite-"));
  const path = join(dir, name);
  return { dir, path, url: `file:${path}`, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
