export type {
  DrizzleTransaction,
  KyselyTransaction,
  NodePostgresTransaction,
  PostgresConnection,
  PostgresDrizzle,
  PostgresTransaction,
  PrismaTransaction,
} from "./internal/connection.js";
export { assertMigrated, migrate } from "./migrate.js";
export { PostgresStorage } from "./postgres-storage.js";
export type { PostgresStorageInstance, PostgresStorageOptions } from "./postgres-storage.js";
export { WAKE_CHANNEL } from "./delivery/enqueue.js";
export { PostgresDedupStore } from "./dedup-store.js";
