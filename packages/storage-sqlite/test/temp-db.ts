import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { SqliteStorage } from "../src/index.js";

/** A fresh directory under the OS temp dir and a database path in it; `remove()` deletes both. */
export function tempDatabase(name = "postel.db"): { dir: string; path: string; url: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "postel-sqlite-"));
  const path = join(dir, name);
  return { dir, path, url: `file:${path}`, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A migrated SqliteStorage on a fresh file for each test of the calling file (vitest hooks), closed
 * and deleted after it. Returns a getter, since each test gets its own storage.
 */
export function freshStorageEachTest(): () => SqliteStorage {
  let storage: SqliteStorage | undefined;
  let remove = () => {};
  beforeEach(async () => {
    const db = tempDatabase();
    remove = db.remove;
    storage = SqliteStorage({ url: db.url });
    await storage.migrate();
  });
  afterEach(async () => {
    await storage?.close();
    remove();
  });
  return () => {
    if (!storage) throw new Error("the storage exists only while a test runs");
    return storage;
  };
}
