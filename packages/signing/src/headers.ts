import { WebhookVerificationError } from "./errors.js";

/** Anything with a case-insensitive `get`, such as the fetch API's `Headers`. */
export interface HeaderGetter {
  get(name: string): string | null;
}

/**
 * Request headers in any shape a server hands over: a fetch `Headers`, Node's
 * `IncomingHttpHeaders` (array values included), or a plain record with any capitalisation.
 */
export type HeadersLike = HeaderGetter | Readonly<Record<string, string | readonly string[] | undefined>>;

/** How `readHeader` treats a header that arrived more than once. */
export interface ReadHeaderOptions {
  /**
   * Separator to join repeated values with (e.g. `" "` for `webhook-signature`, whose values are
   * space-separated lists). Without it, repeated values must be identical, else MALFORMED_HEADER.
   */
  join?: string;
}

/**
 * Reads one header by case-insensitive name; `undefined` when absent. A header repeated by a proxy
 * is joined with `options.join`, or collapsed when every copy is identical; copies that disagree
 * throw `WebhookVerificationError` (`MALFORMED_HEADER`) because picking one would be a guess.
 *
 * @example
 * readHeader(req.headers, "Webhook-Signature", { join: " " }); // "v1,abc= v1,def="
 */
export function readHeader(
  headers: HeadersLike,
  name: string,
  options?: ReadHeaderOptions,
): string | undefined {
  const lower = name.toLowerCase();
  if (isHeaderGetter(headers)) return headers.get(lower) ?? undefined;

  const values: string[] = [];
  for (const key in headers) {
    if (key.length !== lower.length || key.toLowerCase() !== lower) continue;
    const value = headers[key];
    if (typeof value === "string") values.push(value);
    else if (Array.isArray(value)) values.push(...(value as readonly string[]));
  }
  if (values.length <= 1) return values[0];
  if (options?.join !== undefined) return values.join(options.join);
  const first = values[0];
  if (values.every((value) => value === first)) return first;
  throw new WebhookVerificationError(
    "MALFORMED_HEADER",
    `The ${lower} header was sent ${values.length} times with different values; ` +
      "a proxy or client duplicated it. Send it exactly once.",
    lower,
  );
}

/**
 * Like `readHeader`, but an absent or blank header throws MISSING_HEADER naming the header, since
 * every scheme's first question is whether the sender signed at all.
 */
export function requireHeader(headers: HeadersLike, name: string, options?: ReadHeaderOptions): string {
  const value = readHeader(headers, name, options);
  if (value === undefined || value.trim() === "") {
    throw new WebhookVerificationError(
      "MISSING_HEADER",
      `The ${name.toLowerCase()} header is missing or empty. Check that the sender signs this endpoint ` +
        "and that no proxy strips the header.",
      name.toLowerCase(),
    );
  }
  return value;
}

function isHeaderGetter(headers: HeadersLike): headers is HeaderGetter {
  return typeof (headers as { get?: unknown }).get === "function";
}
