import { compileStatement, type Statement, StatementParam } from "@postel/core/storage";

// drizzle-orm is an optional peer: statements are core's `Statement`s, and drizzle is loaded only to
// run one on a drizzle transaction (the app's drizzle, so present).

export { type Statement, statement } from "@postel/core/storage";

/** The text with `$1`, `$2`, … placeholders and the values in order, for postgres.js, pg, Prisma, Kysely. */
export function compile(query: Statement): { text: string; params: unknown[] } {
  return compileStatement(query, (n) => `$${n}`);
}

/** The same statement as drizzle `sql`, for a drizzle transaction. */
export async function toDrizzle(query: Statement): Promise<unknown> {
  const { sql } = await import("drizzle-orm");
  return sql.join(
    query.chunks.map((chunk) => (chunk instanceof StatementParam ? sql.param(chunk.value) : sql.raw(chunk))),
  );
}
