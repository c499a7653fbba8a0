export { SqliteDedupStore } from "./dedup-store.js";
export type { SqliteDedupStoreOptions } from "./dedup-store.js";
export { migrate } from "./migrate.js";
export { SqliteStorage } from "./sqlite-storage.js";
export type { DrizzleSqliteDatabase, SqliteConnection, SqliteStorageOptions } from "./sqlite-storage.js";
export type { DrizzleSqliteTransaction, SqliteTransaction } from "./internal/transaction.js";
