import type { Client, ResultSet, Row } from "@libsql/client";
import { InvalidInputError, SchemaMismatchError } from "@postel/core/storage";
import { asConnectionError } from "./connection-errors.js";
import type { Statement } from "./statement.js";
import type { Writer } from "./writer.js";
import { serialiseWrite } from "./write-lock.js";

export type { Statement } from "./statement.js";

/** The seam every role module uses: reads in autocommit, writes as one single-writer transaction. */
export interface Db {
  /** Run one read-only statement and return its rows. */
  read(statement: Statement): Promise<Row[]>;
  /**
   * Run `statements` as one write transaction (`BEGIN IMMEDIATE` … `COMMIT`, via `client.batch`),
   * queued behind this process's other writes. Later statements see the effects of earlier ones.
   */
  write(statements: Statement[], options?: WriteOptions): Promise<ResultSet[]>;
}

/** How `Db.write` runs its transaction. */
export interface WriteOptions {
  /**
   * Turn the connection's foreign-key checks off for this transaction. Only for deletes that remove
   * children before their parents themselves: SQLite checks a deleted parent row by scanning every
   * child table without an index on its key (`postel_attempts.delivery_id` has none, so that writing
   * an attempt stays cheap), which would make deleting history quadratic.
   */
  withoutForeignKeyChecks?: boolean;
}

/**
 * A `Db` reading through `client` and writing through the writer `ready()` resolves to, once the
 * connection is set up (and migrated).
 */
export function createDb(client: Client, ready: () => Promise<Writer>): Db {
  return {
    async read(statement) {
      try {
        await ready();
        return (await client.execute(statement)).rows;
      } catch (error) {
        throw translateError(error);
      }
    },
    async write(statements, options = {}) {
      let writer: Writer;
      try {
        writer = await ready();
      } catch (error) {
        throw translateError(error);
      }
      return serialiseWrite(async () => {
        const unchecked = options.withoutForeignKeyChecks === true;
        try {
          // A pragma of the connection, a no-op inside a transaction: set around it. A connection the
          // writer swaps in meanwhile (after SQLITE_BUSY) checks as usual: slower, never wrong.
          if (unchecked) await writer.execute("PRAGMA foreign_keys = OFF");
          return await writer.batch(statements);
        } catch (error) {
          throw translateError(error);
        } finally {
          if (unchecked) await writer.execute("PRAGMA foreign_keys = ON").catch(() => undefined);
        }
      });
    },
  };
}

/**
 * Turn driver errors with a known fix into Postel errors: a database that cannot be opened or reached
 * is unavailable; a missing table means the schema was never migrated; a duplicate message id is bad
 * input. Anything else is returned unchanged.
 */
export function translateError(error: unknown): unknown {
  const unavailable = asConnectionError(error);
  if (unavailable !== error) return unavailable;
  const message = messagesOf(error).join("\n");
  const missing = /no such (?:table|view): (\w+)/.exec(message);
  if (missing) {
    return new SchemaMismatchError(
      "SCHEMA_MISMATCH",
      `SQLite table "${missing[1]}" does not exist: Postel's schema has not been applied to this database. ` +
        "Call `await storage.migrate()` once at startup (or create SqliteStorage without `migrate: false`).",
      { cause: error },
    );
  }
  if (/UNIQUE constraint failed: postel_messages\.id/.test(message)) {
    return new InvalidInputError("INVALID_ARGUMENT", "A message with this id already exists.", {
      cause: error,
    });
  }
  if (/UNIQUE constraint failed: postel_audit_log\.id/.test(message)) {
    return new InvalidInputError("INVALID_ARGUMENT", "An audit entry with this id already exists.", {
      cause: error,
    });
  }
  return error;
}

function messagesOf(error: unknown): string[] {
  const messages: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    messages.push(current.message);
    current = current.cause;
  }
  return messages;
}
