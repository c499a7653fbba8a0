// The statements that may run in an app's transaction (send, sendBatch, the dedup store's complete),
// built without drizzle-orm: it is an optional peer, loaded only to run them on a drizzle transaction.

/** A bound value of a {@link Statement}. */
class Param {
  constructor(readonly value: unknown) {}
}

/** SQL text with its values kept apart, to be compiled for whichever client runs it. */
export class Statement {
  constructor(readonly chunks: readonly (string | Param)[]) {}
}

/**
 * A statement from a template: every interpolated value is a bound parameter, except a `Statement`,
 * which is spliced in with its own parameters.
 */
export function statement(strings: TemplateStringsArray, ...values: unknown[]): Statement {
  const chunks: (string | Param)[] = [strings[0]!];
  values.forEach((value, i) => {
    if (value instanceof Statement) chunks.push(...value.chunks);
    else chunks.push(new Param(value));
    chunks.push(strings[i + 1]!);
  });
  return new Statement(chunks);
}

/** The text with `$1`, `$2`, … placeholders and the values in order, for postgres.js, pg, Prisma, Kysely. */
export function compile(query: Statement): { text: string; params: unknown[] } {
  const params: unknown[] = [];
  let text = "";
  for (const chunk of query.chunks) {
    if (chunk instanceof Param) {
      params.push(chunk.value);
      text += `$${params.length}`;
    } else {
      text += chunk;
    }
  }
  return { text, params };
}

/** The same statement as drizzle `sql`, for a drizzle transaction (drizzle-orm is the app's, so present). */
export async function toDrizzle(query: Statement): Promise<unknown> {
  const { sql } = await import("drizzle-orm");
  return sql.join(
    query.chunks.map((chunk) => (chunk instanceof Param ? sql.param(chunk.value) : sql.raw(chunk))),
  );
}
