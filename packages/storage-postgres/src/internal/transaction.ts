import { InvalidInputError } from "@postel/core/storage";
import type { ParameterOrJSON, Sql, TransactionSql } from "postgres";
import type { RawRow } from "./rows.js";
import { compile, type Statement, toDrizzle } from "./statement.js";

// The transactions `send(event, { tx })` joins. Each is described by the shape Postel calls, not
// imported from its driver: a postgres.js user never installs node-postgres, Prisma, Kysely or drizzle.

/**
 * A drizzle transaction, `db.transaction(async (tx) => …)`, on postgres.js or node-postgres, of any
 * drizzle-orm version (described by what Postel calls, so it never ties you to a drizzle of Postel's).
 */
export interface DrizzleTransaction {
  execute(query: never): Promise<unknown>;
  rollback(): void;
}

/** A node-postgres (`pg`) `PoolClient` or `Client` on which the app ran `BEGIN`. */
export interface NodePostgresTransaction {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** A Prisma interactive transaction client, `prisma.$transaction(async (tx) => …)`. */
export interface PrismaTransaction {
  $queryRawUnsafe(query: string, ...values: unknown[]): Promise<unknown>;
}

/** A Kysely transaction, `db.transaction().execute(async (trx) => …)`. */
export interface KyselyTransaction {
  readonly isTransaction: boolean;
  executeQuery(query: KyselyCompiledQuery): Promise<{ rows: unknown[] }>;
}

/** The part of Kysely's `CompiledQuery` its executor reads for a raw statement. */
interface KyselyCompiledQuery {
  readonly sql: string;
  readonly parameters: readonly unknown[];
  readonly query: {
    readonly kind: "RawNode";
    readonly sqlFragments: readonly string[];
    readonly parameters: readonly [];
  };
  readonly queryId: { readonly queryId: string };
}

/**
 * What `send(event, { tx })` accepts: a postgres.js `sql.begin` handle, a drizzle transaction (on
 * postgres.js or node-postgres), a node-postgres client inside `BEGIN`, a Prisma interactive
 * transaction client or a Kysely transaction.
 */
export type PostgresTransaction =
  | TransactionSql
  | DrizzleTransaction
  | NodePostgresTransaction
  | PrismaTransaction
  | KyselyTransaction;

/** Runs one statement and returns its rows. */
export type Execute = (query: Statement) => Promise<RawRow[]>;

/**
 * Where a statement runs: on `tx` when given (any kind of {@link PostgresTransaction}), else on the
 * pool. It becomes drizzle `sql` on a drizzle transaction and text with `$n` parameters for every
 * other client. Throws `InvalidInputError` (`INVALID_TRANSACTION`) for anything else, before a query
 * runs.
 */
export function executorFor(pool: Sql, tx: PostgresTransaction | undefined): Execute {
  const run = tx === undefined ? postgresJs(pool, pool.options.prepare !== false) : runnerFor(tx);
  if (run === "drizzle") {
    const drizzleTx = tx as DrizzleTransaction;
    return async (query) => rowsOf(await drizzleTx.execute((await toDrizzle(query)) as never));
  }
  return (query) => {
    const { text, params } = compile(query);
    return run(text, params);
  };
}

type Run = (text: string, params: unknown[]) => Promise<RawRow[]>;

// Named prepared statements only on Postel's own pool, as it is configured: a pool made with
// `prepare: false` (behind a transaction pooler such as PgBouncer) must never get one, and an app's
// transaction does not say how its pool was made, so its statements are never named.
function postgresJs(client: Sql | TransactionSql, prepare: boolean): Run {
  return async (text, params) => [
    ...(await client.unsafe<RawRow[]>(text, params as ParameterOrJSON<never>[], { prepare })),
  ];
}

function runnerFor(tx: PostgresTransaction): Run | "drizzle" {
  const value = tx as unknown as Record<string, unknown> | null;
  if (typeof tx === "function") {
    if (typeof value?.["savepoint"] === "function") return postgresJs(tx as TransactionSql, false);
    throw notATransaction("a postgres.js pool", "the handle of sql.begin(async (tx) => …)");
  }
  if (typeof value !== "object" || value === null) throw notATransaction(typeName(value));
  if (typeof value["$queryRawUnsafe"] === "function") {
    // The interactive transaction client lacks the root client's $connect (and $disconnect, $on).
    if (typeof value["$connect"] === "function") {
      throw notATransaction("a PrismaClient", "the client of prisma.$transaction(async (tx) => …)");
    }
    const prisma = tx as PrismaTransaction;
    return async (text, params) => (await prisma.$queryRawUnsafe(text, ...params)) as RawRow[];
  }
  if (typeof value["executeQuery"] === "function" && "isTransaction" in value) {
    if (value["isTransaction"] !== true) {
      throw notATransaction("a Kysely instance", "the trx of db.transaction().execute(async (trx) => …)");
    }
    const kysely = tx as KyselyTransaction;
    return async (text, params) => {
      const query = { kind: "RawNode", sqlFragments: [text], parameters: [] } as const;
      const result = await kysely.executeQuery({
        sql: text,
        parameters: params,
        query,
        queryId: { queryId: "postel" },
      });
      return result.rows as RawRow[];
    };
  }
  if (typeof value["execute"] === "function") {
    if (typeof value["rollback"] === "function") return "drizzle";
    throw notATransaction("a drizzle database", "the tx of db.transaction(async (tx) => …)");
  }
  if (typeof value["query"] === "function") {
    if (typeof value["totalCount"] === "number") {
      throw notATransaction(
        "a node-postgres Pool (each query may run on another connection)",
        "a client from await pool.connect() after client.query('BEGIN')",
      );
    }
    const client = tx as NodePostgresTransaction;
    return async (text, params) => (await client.query(text, params)).rows as RawRow[];
  }
  throw notATransaction(typeName(value));
}

/** drizzle's `execute` resolves to the rows on postgres.js and to a result with `rows` on node-postgres. */
function rowsOf(result: unknown): RawRow[] {
  if (Array.isArray(result)) return [...result] as RawRow[];
  return ((result as { rows?: unknown[] } | null)?.rows ?? []) as RawRow[];
}

const ACCEPTED =
  "a postgres.js transaction (sql.begin(async (tx) => …)), a drizzle transaction on postgres.js or " +
  "node-postgres (db.transaction(async (tx) => …)), a node-postgres client after BEGIN " +
  "(const client = await pool.connect(); await client.query('BEGIN')), a Prisma interactive transaction " +
  "(prisma.$transaction(async (tx) => …)) or a Kysely transaction (db.transaction().execute(async (trx) => …))";

function notATransaction(what: string, instead?: string): InvalidInputError {
  return new InvalidInputError(
    "INVALID_TRANSACTION",
    `tx is ${what}, not a transaction Postel can join${instead ? `: pass ${instead}` : ""}. ` +
      `\`tx\` takes ${ACCEPTED}.`,
  );
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object of unknown kind" : `a ${typeof value}`;
}
