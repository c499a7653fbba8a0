import * as v from "valibot";
import { toConfigurationIssues } from "../config/schemas.js";
import { InvalidInputError } from "../errors.js";
import { isLookupId } from "./lookup-id.js";
import { quote } from "./quote.js";

/** One page of a keyset-paginated listing; pass `nextCursor` back as `cursor` for the next page (null: no more). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Page size of every list: default 100, at most 1000. */
export const PAGE_LIMITS = { default: 100, max: 1_000 } as const;

/** `limit` of a list: an integer from 1 to `PAGE_LIMITS.max`, default `PAGE_LIMITS.default`. */
export const limitSchema = v.optional(
  v.pipe(
    v.number(`limit must be an integer from 1 to ${PAGE_LIMITS.max}`),
    v.integer(`limit must be an integer from 1 to ${PAGE_LIMITS.max}`),
    v.minValue(1, `limit must be an integer from 1 to ${PAGE_LIMITS.max}`),
    v.maxValue(PAGE_LIMITS.max, `limit must be at most ${PAGE_LIMITS.max}; page with cursor for more`),
  ),
  PAGE_LIMITS.default,
);

/** A point in time given as a `Date` or epoch milliseconds, as epoch milliseconds. */
export const timeSchema = v.pipe(
  v.union(
    [v.date(), v.pipe(v.number(), v.finite())],
    "must be a valid Date or a finite number of epoch milliseconds",
  ),
  v.transform((t) => (t instanceof Date ? t.getTime() : t)),
);

/** A text filter (ids, types, tenants): a string the storage can hold. */
export const filterTextSchema = v.pipe(
  v.string("must be a string"),
  v.check(
    (text: string) => isLookupId(text),
    "must be well-formed text (no NUL character, no lone surrogate)",
  ),
);

/** `cursor` of a list: the `nextCursor` string of the previous page (undefined for the first). */
export const cursorSchema = v.optional(v.string("cursor must be the nextCursor string of the previous page"));

/**
 * Validates the options of `call` (e.g. `"messages.list()"`) against `schema`, throwing one
 * `InvalidInputError` (`INVALID_ARGUMENT`) that lists every bad field and its fix.
 */
export function parseOptions<S extends v.GenericSchema>(
  schema: S,
  options: unknown,
  call: string,
): v.InferOutput<S> {
  const result = v.safeParse(schema, options === undefined ? {} : options);
  if (result.success) return result.output;
  const lines = toConfigurationIssues(result.issues).map(({ path, message }) => {
    // The options lists paged with before they returned pages.
    const old = path === "before" || path === "after";
    return `  - ${path || "(options)"}: ${old ? "unknown option; lists page with `cursor` now: pass back the previous page's nextCursor" : message}`;
  });
  throw new InvalidInputError("INVALID_ARGUMENT", `Invalid ${call} options:\n${lines.join("\n")}`);
}

/**
 * A cursor is the base64url of `[list, key]`: the list it came from (a cursor of another list is
 * refused) and the id of the last row its page examined. Opaque to callers; only `decodeCursor` reads it.
 */
export function encodeCursor(list: string, key: string): string {
  return Buffer.from(JSON.stringify([list, key]), "utf8").toString("base64url");
}

/**
 * The keyset of `cursor` for `list`, or undefined for the first page. Anything this list's
 * `nextCursor` did not produce throws `InvalidInputError` `INVALID_CURSOR`.
 */
export function decodeCursor(cursor: string | undefined, list: string, call: string): string | undefined {
  if (cursor === undefined) return undefined;
  const key = typeof cursor === "string" ? keyOf(cursor, list) : undefined;
  if (key === undefined) {
    throw new InvalidInputError(
      "INVALID_CURSOR",
      `cursor ${quote(cursor)} is not a cursor of ${call}: pass back the nextCursor of the previous page unchanged, or omit cursor for the first page.`,
    );
  }
  return key;
}

function keyOf(cursor: string, list: string): string | undefined {
  const bytes = Buffer.from(cursor, "base64url");
  // Buffer.from skips characters that are not base64url: a cursor must round-trip exactly.
  if (cursor.length === 0 || bytes.toString("base64url") !== cursor) return undefined;
  try {
    const parsed: unknown = JSON.parse(bytes.toString("utf8"));
    if (!Array.isArray(parsed) || parsed.length !== 2 || parsed[0] !== list) return undefined;
    return isLookupId(parsed[1]) ? parsed[1] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The page of `rows`, fetched with `limit + 1` so one extra row tells whether another page follows;
 * `key` is the keyset of a row (its id), `map` its API shape.
 */
export function toPage<R, T>(
  rows: R[],
  limit: number,
  list: string,
  key: (row: R) => string,
  map: (row: R) => T,
): Page<T> {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return {
    items: items.map(map),
    nextCursor: rows.length > limit && last !== undefined ? encodeCursor(list, key(last)) : null,
  };
}
