import { type ConfigurationIssue, ConfigurationError } from "@postel/core/storage";
import postgres, { type Sql } from "postgres";

export type {
  DrizzleTransaction,
  KyselyTransaction,
  NodePostgresTransaction,
  PostgresTransaction,
  PrismaTransaction,
} from "./transaction.js";

/** A drizzle database on postgres.js, with or without a relational schema: Postel uses its pool, `$client`. */
export interface PostgresDrizzle {
  $client: Sql;
}

/** Where Postel's queries go: a connection string (Postel owns the pool), or the app's own pool. */
export type PostgresConnection = { url: string } | { sql: Sql } | { db: PostgresDrizzle };

/** The pool to use and whether Postel opened it (and so must end it on `close()`). */
export interface ResolvedConnection {
  sql: Sql;
  owned: boolean;
}

/**
 * The pool `connection` names; throws one `ConfigurationError` (as `factory options`) listing what
 * is wrong with it and with `extra` issues (the factory's other options).
 */
export function resolveConnection(
  connection: PostgresConnection,
  factory: string,
  extra: ConfigurationIssue[] = [],
  poolOptions: { prepare?: boolean } = {},
): ResolvedConnection {
  const issues = [...connectionIssues(connection, factory), ...extra];
  let resolved: ResolvedConnection | undefined;
  if (issues.length === 0) {
    if ("url" in connection) {
      try {
        const url = connection.url;
        // Postel's own pool: quiet notices such as "relation already exists, skipping".
        const options: postgres.Options<Record<string, postgres.PostgresType>> = {
          onnotice: () => {},
          backoff: reconnectDelay,
          ...poolOptions,
        };
        let sql = postgres(url, options);
        if (sql.options.host.length > 1 && sql.options.target_session_attrs !== "primary") {
          // Several hosts: only the primary will do. postgres.js checks `read-write` by the
          // default_transaction_read_only a hot standby reports as off, and without any attrs takes
          // whichever host answers first.
          options.target_session_attrs = "primary";
          sql = postgres(url, options);
        }
        resolved = { sql, owned: true };
      } catch {
        // The driver's error repeats the URL, password included: it is not kept as the cause.
        issues.push({
          path: "url",
          message: `is not a connection string postgres.js can parse (${URL_EXAMPLE})`,
        });
      }
    } else {
      resolved = { sql: "sql" in connection ? connection.sql : connection.db.$client, owned: false };
    }
  }
  if (resolved === undefined) throw new ConfigurationError(issues, `${factory} options`);
  return resolved;
}

/**
 * Seconds a connection of Postel's own pool waits before reconnecting, after `retries` failed tries
 * in a row across the pool: 25 ms doubling to half a second. postgres.js's default grows to 20 s, and
 * its count only resets on a successful connection, so after ten seconds of a failover every
 * connection waited up to 20 s more once the new primary took writes.
 */
export function reconnectDelay(retries: number): number {
  return Math.min(0.025 * 2 ** retries, 0.5);
}

/** Throws `ConfigurationError` unless `sql` is a postgres.js pool (for the standalone `migrate(sql)`). */
export function assertPostgresJs(sql: unknown, what: string): asserts sql is Sql {
  const problem = notPostgresJs(sql);
  if (problem) throw new ConfigurationError([{ path: "sql", message: problem }], what);
}

/** Whether `value` is a `postgres://` or `postgresql://` connection string. */
export function isPostgresUrl(value: unknown): value is string {
  return typeof value === "string" && /^postgres(?:ql)?:\/\//i.test(value);
}

const URL_EXAMPLE = 'e.g. "postgres://user:password@localhost:5432/app"';

function connectionIssues(connection: unknown, factory: string): ConfigurationIssue[] {
  const example = `${factory}({ url: process.env.DATABASE_URL })`;
  if (typeof connection === "string") {
    return [{ path: "", message: `a connection string goes in \`url\`: ${example}` }];
  }
  if (isPostgresJs(connection)) {
    return [{ path: "", message: `a postgres.js pool goes in \`sql\`: ${factory}({ sql })` }];
  }
  if (isNodePostgres(connection)) return [{ path: "", message: NODE_POSTGRES }];
  if (typeof connection !== "object" || connection === null) {
    return [
      { path: "", message: `must be { url }, { sql } or { db }, got ${typeName(connection)}: ${example}` },
    ];
  }
  const given = (["url", "sql", "db"] as const).filter((key) => key in connection);
  if (given.length !== 1) {
    return [
      {
        path: "",
        message:
          given.length === 0
            ? "needs one of `url` (a connection string; Postel opens and closes its own pool), `sql` (your " +
              "postgres.js pool) or `db` (your drizzle database on postgres.js), " +
              `e.g. ${example}`
            : `give only one of ${given.map((key) => `\`${key}\``).join(", ")}`,
      },
    ];
  }
  const { url, sql, db } = connection as { url?: unknown; sql?: unknown; db?: unknown };
  if (given[0] === "url" && typeof url === "string" && !isPostgresUrl(url)) {
    return [{ path: "url", message: `must start with postgres:// or postgresql:// (${URL_EXAMPLE})` }];
  }
  if (given[0] === "url" && (typeof url !== "string" || url === "")) {
    const got =
      typeof url === "string"
        ? "an empty string"
        : url === undefined
          ? "undefined (is the environment variable it comes from set?)"
          : typeName(url);
    return [{ path: "url", message: `must be a connection string (${URL_EXAMPLE}), got ${got}` }];
  }
  if (given[0] === "sql") {
    const problem =
      typeof sql === "string" ? `is a string: a connection string goes in \`url\`` : notPostgresJs(sql);
    return problem ? [{ path: "sql", message: problem }] : [];
  }
  if (given[0] === "db") {
    const client = (db as { $client?: unknown } | null)?.$client;
    if (isNodePostgres(client)) {
      return [
        {
          path: "db",
          message:
            "is a drizzle database on node-postgres (drizzle-orm/node-postgres), which is not supported yet: " +
            "create it with drizzle-orm/postgres-js instead (drizzle(postgres(url))), or pass `url`",
        },
      ];
    }
    if (!isPostgresJs(client)) {
      return [
        {
          path: "db",
          message:
            "must be a drizzle database on postgres.js: drizzle(postgres(url)) from drizzle-orm/postgres-js",
        },
      ];
    }
  }
  return [];
}

const NODE_POSTGRES =
  "is a node-postgres (pg) Pool or Client, which @postel/storage-postgres does not support yet: pass a " +
  "postgres.js pool ({ sql: postgres(url) }, from the `postgres` package) or the connection string ({ url }) " +
  "and Postel opens its own";

function notPostgresJs(sql: unknown): string | undefined {
  if (isPostgresJs(sql)) return undefined;
  if (isNodePostgres(sql)) return NODE_POSTGRES;
  return `must be a postgres.js pool, postgres(url) from the \`postgres\` package; got ${typeName(sql)}`;
}

/** postgres.js pools are callable tagged templates with `begin`, `reserve` and `listen`. */
function isPostgresJs(value: unknown): value is Sql {
  const sql = value as { begin?: unknown; reserve?: unknown; listen?: unknown } | null;
  return (
    typeof value === "function" &&
    typeof sql?.begin === "function" &&
    typeof sql.reserve === "function" &&
    typeof sql.listen === "function"
  );
}

/** A `pg.Pool` or `pg.Client`: an object (not callable) with `query` and `connect`. */
function isNodePostgres(value: unknown): boolean {
  const pg = value as { query?: unknown; connect?: unknown } | null;
  return (
    typeof pg === "object" &&
    pg !== null &&
    typeof pg.query === "function" &&
    typeof pg.connect === "function"
  );
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : typeof value;
}
