// For storages written in SQL: statements that may run in an app's transaction, kept apart from any
// query builder, so a storage can compile them for whichever client the transaction belongs to
// (drizzle-orm among them, as an optional peer it loads only for a drizzle transaction).

/** A bound value of a {@link Statement}. */
export class StatementParam {
  constructor(readonly value: unknown) {}
}

/** SQL text with its values kept apart, made by {@link statement}. */
export class Statement {
  constructor(readonly chunks: readonly (string | StatementParam)[]) {}
}

/**
 * A statement from a template: every interpolated value is a bound parameter, except a `Statement`,
 * which is spliced in with its own parameters.
 *
 * @example
 * const insert = statement`INSERT INTO t (id) VALUES (${id})`;
 * compileStatement(insert, (n) => `$${n}`); // { text: "INSERT INTO t (id) VALUES ($1)", params: [id] }
 */
export function statement(strings: TemplateStringsArray, ...values: unknown[]): Statement {
  const chunks: (string | StatementParam)[] = [strings[0]!];
  values.forEach((value, i) => {
    if (value instanceof Statement) chunks.push(...value.chunks);
    else chunks.push(new StatementParam(value));
    chunks.push(strings[i + 1]!);
  });
  return new Statement(chunks);
}

/** The statement's text, each value replaced by `placeholder(n)` (1-based), and the values in order. */
export function compileStatement(
  query: Statement,
  placeholder: (n: number) => string,
): { text: string; params: unknown[] } {
  const params: unknown[] = [];
  let text = "";
  for (const chunk of query.chunks) {
    if (chunk instanceof StatementParam) {
      params.push(chunk.value);
      text += placeholder(params.length);
    } else {
      text += chunk;
    }
  }
  return { text, params };
}
