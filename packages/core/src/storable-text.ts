// A lone surrogate: a high half not followed by a low one, or a low half not preceded by a high one.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Why `text` cannot be stored as given, or null when it can. PostgreSQL refuses NUL in text, SQLite
 * keeps it, and both turn a lone surrogate (half of a UTF-16 pair) into U+FFFD, so two different
 * strings would come back equal: such strings are refused before anything is written.
 */
export function unstorable(text: string): string | null {
  if (text.includes("\u0000")) return "contains a NUL character (\\u0000), which cannot be stored";
  if (LONE_SURROGATE.test(text)) {
    return "contains a lone surrogate (half of a UTF-16 pair, e.g. \\ud800), which would be stored as U+FFFD";
  }
  return null;
}

/** Every string and object key inside a JSON value that cannot be stored, with its dotted path. */
export function unstorableIn(value: unknown, path: string): { path: string; message: string }[] {
  if (typeof value === "string") {
    const reason = unstorable(value);
    return reason === null ? [] : [{ path, message: reason }];
  }
  if (typeof value !== "object" || value === null) return [];
  const problems: { path: string; message: string }[] = [];
  for (const [key, inner] of Object.entries(value)) {
    const at = Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`;
    const keyReason = Array.isArray(value) ? null : unstorable(key);
    if (keyReason !== null) problems.push({ path: at, message: `key ${keyReason}` });
    problems.push(...unstorableIn(inner, at));
  }
  return problems;
}
