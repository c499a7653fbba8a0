import { type ClaimResult, type DedupKey, type DedupStore, expirySweeper } from "./dedup.js";

/** What `D1DedupStore` needs of a D1 prepared statement (Cloudflare's `D1PreparedStatement` fits). */
export interface D1StatementLike {
  bind(...values: unknown[]): D1StatementLike;
  run(): Promise<D1ResultLike>;
}

/** What `D1DedupStore` reads of a D1 result. */
export interface D1ResultLike {
  results?: unknown[];
  meta?: { changes?: number };
}

/** What `D1DedupStore` needs of a D1 binding (Cloudflare's `D1Database` fits, no types package needed). */
export interface D1DatabaseLike {
  prepare(query: string): D1StatementLike;
  /** Runs the statements in one transaction, in order. */
  batch(statements: D1StatementLike[]): Promise<D1ResultLike[]>;
}

/** Options of `D1DedupStore()`. */
export interface D1DedupStoreOptions {
  /** Create the table on first use (default true); false when a `wrangler d1 migrations` file holds `D1_DEDUP_SCHEMA`. */
  migrate?: boolean;
}

/** A `DedupStore` on Cloudflare D1; see `D1DedupStore()`. */
export interface D1DedupStore extends DedupStore {
  /** Create the table and its index if missing (idempotent); otherwise the first claim does it. */
  migrate(): Promise<void>;
  /** Resolves when a background sweep of expired records has finished: hand it to `ctx.waitUntil`. */
  settled(): Promise<void>;
}

/**
 * The table `D1DedupStore` uses, the same shape as `@postel/storage-sqlite`'s `postel_received`:
 * one record per (source, webhook id), "processing" or "done" until `expires_at` (epoch ms). Put it
 * in a `wrangler d1 migrations` file and pass `{ migrate: false }` to manage the schema yourself.
 */
export const D1_DEDUP_SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS postel_received (
  source TEXT NOT NULL,
  id TEXT NOT NULL,
  status TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (source, id)
)`,
  "CREATE INDEX IF NOT EXISTS postel_received_expires ON postel_received (expires_at)",
];

// The upsert claims a missing or expired record in one statement (D1 runs one writer at a time, and a
// batch is one transaction), so of N concurrent claims exactly one sees its row come back.
const CLAIM = `INSERT INTO postel_received (source, id, status, received_at, expires_at)
  VALUES (?1, ?2, 'processing', ?3, ?4)
  ON CONFLICT (source, id) DO UPDATE
    SET status = 'processing', received_at = excluded.received_at, expires_at = excluded.expires_at
    WHERE postel_received.expires_at <= ?3
  RETURNING 1 AS claimed`;
const STATUS = "SELECT status FROM postel_received WHERE source = ?1 AND id = ?2";
const COMPLETE = "UPDATE postel_received SET status = 'done', expires_at = ?3 WHERE source = ?1 AND id = ?2";
// Only a "processing" record: a release never forgets a webhook that was handled.
const RELEASE = "DELETE FROM postel_received WHERE source = ?1 AND id = ?2 AND status = 'processing'";
const DELETE_EXPIRED = `DELETE FROM postel_received WHERE rowid IN (
  SELECT rowid FROM postel_received WHERE expires_at <= ?1 ORDER BY expires_at LIMIT ?2)`;

/**
 * Inbound dedup on Cloudflare D1, for a receiver running in a Worker: a claim is one upsert (an
 * expired record is taken over in the same statement) read back in the same batch, so no
 * read-then-write race. Claims sweep expired records in the background, at most once a minute per
 * store: create the store once per isolate, and `ctx.waitUntil(store.settled())` to let a sweep finish.
 * @example
 * let store: D1DedupStore | undefined;
 * export default {
 *   async fetch(request: Request, env: { DB: D1Database; SECRET: string }, ctx: ExecutionContext) {
 *     store ??= D1DedupStore(env.DB);
 *     const receiver = Receiver({ sources: { billing: { verify: env.SECRET, dedup: store } } });
 *     const response = await handleRequest(receiver, "billing", request, (event) => record(event.payload));
 *     ctx.waitUntil(store.settled());
 *     return response;
 *   },
 * };
 */
export function D1DedupStore(db: D1DatabaseLike, options: D1DedupStoreOptions = {}): D1DedupStore {
  let migrated: Promise<void> | null = options.migrate === false ? Promise.resolve() : null;
  const migrate = async () => {
    await db.batch(D1_DEDUP_SCHEMA.map((sql) => db.prepare(sql)));
  };
  const ready = () => {
    // A failed migration is tried again on the next call instead of failing every claim after it.
    migrated ??= migrate().catch((error: unknown) => {
      migrated = null;
      throw error;
    });
    return migrated;
  };
  const sweeper = expirySweeper(async (now, batch) => {
    const result = await db.prepare(DELETE_EXPIRED).bind(now, batch).run();
    return result.meta?.changes ?? 0;
  });

  return {
    async claim(key: DedupKey, now: number, processingUntil: number): Promise<ClaimResult> {
      await ready();
      sweeper.maybeSweep(now);
      const [claimed, existing] = await db.batch([
        db.prepare(CLAIM).bind(key.source, key.id, now, processingUntil),
        db.prepare(STATUS).bind(key.source, key.id),
      ]);
      if ((claimed?.results?.length ?? 0) > 0) return "claimed";
      const row = existing?.results?.[0] as { status?: unknown } | undefined;
      return row?.status === "done" ? "duplicate" : "in-flight";
    },
    async complete(key, _now, expiresAt) {
      await ready();
      await db.prepare(COMPLETE).bind(key.source, key.id, expiresAt).run();
    },
    async release(key) {
      await ready();
      await db.prepare(RELEASE).bind(key.source, key.id).run();
    },
    migrate: () => {
      migrated = null;
      return ready();
    },
    settled: () => sweeper.settled(),
  };
}
