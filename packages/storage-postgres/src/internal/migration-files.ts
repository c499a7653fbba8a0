import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PostelError } from "@postel/core/storage";

/** One shipped migration: its name (the drizzle-kit tag), SQL text and content hash. */
export interface MigrationFile {
  name: string;
  sql: string;
  hash: string;
}

interface Journal {
  entries: { idx: number; tag: string }[];
}

let cached: Promise<MigrationFile[]> | undefined;

/** The migrations shipped in this package, in the order drizzle-kit's journal lists them. */
export function loadMigrations(): Promise<MigrationFile[]> {
  cached ??= readMigrations().catch((error: unknown) => {
    cached = undefined;
    throw error;
  });
  return cached;
}

async function readMigrations(): Promise<MigrationFile[]> {
  const dir = migrationsDir();
  const journal = JSON.parse(await readFile(join(dir, "meta", "_journal.json"), "utf8")) as Journal;
  const entries = [...journal.entries].sort((a, b) => a.idx - b.idx);
  return Promise.all(
    entries.map(async ({ tag }) => {
      const sql = await readFile(join(dir, `${tag}.sql`), "utf8");
      return { name: tag, sql, hash: createHash("sha256").update(sql).digest("hex") };
    }),
  );
}

// The code runs from src/ (tests), src/internal/ or dist/ (published, possibly a chunk), so walk up
// to the package folder that holds migrations/ rather than hard-coding a relative path.
function migrationsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 4; depth++) {
    const candidate = join(dir, "migrations");
    if (existsSync(join(candidate, "meta", "_journal.json"))) return candidate;
    dir = dirname(dir);
  }
  throw new PostelError(
    "MIGRATIONS_NOT_FOUND",
    "@postel/storage-postgres could not find its migrations/ folder next to its code; " +
      "if you bundle the package, keep it external (or copy its migrations/ folder beside the bundle).",
  );
}
