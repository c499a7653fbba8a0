/** The encodings of a credential a dump might hold it in: raw, base64, base64url and hex. */
export function encodingsOf(value: string): string[] {
  const bytes = Buffer.from(value, "utf8");
  const forms = [value, bytes.toString("base64"), bytes.toString("base64url"), bytes.toString("hex")];
  // A `whsec_` secret's payload is itself base64 of the key bytes: the payload, and those bytes in the other encodings.
  const payload = /^whsec_([A-Za-z0-9+/=]+)$/.exec(value)?.[1];
  if (payload !== undefined) {
    const key = Buffer.from(payload, "base64");
    forms.push(payload, key.toString("base64url"), key.toString("hex"));
  }
  // A bearer token, also alone.
  const token = /^Bearer (.+)$/.exec(value)?.[1];
  if (token !== undefined) forms.push(...encodingsOf(token));
  return forms.map((form) => form.replace(/=+$/, ""));
}

const WINDOW = 16;

/**
 * The needles (each at least 16 characters) that occur in `haystack`, read as latin1 so any bytes
 * compare. One pass over the haystack with a hash of every needle's first 16 characters, so a dump of
 * megabytes is searched for thousands of needles in about a second.
 */
export function findIn(haystack: Uint8Array, needles: readonly string[]): string[] {
  const text = Buffer.from(haystack.buffer, haystack.byteOffset, haystack.byteLength).toString("latin1");
  const byStart = new Map<string, string[]>();
  for (const needle of needles) {
    if (needle.length < WINDOW) throw new Error(`findIn: needle shorter than ${WINDOW} characters`);
    const start = needle.slice(0, WINDOW);
    byStart.set(start, [...(byStart.get(start) ?? []), needle]);
  }
  const found = new Set<string>();
  for (let i = 0; i + WINDOW <= text.length; i++) {
    const candidates = byStart.get(text.slice(i, i + WINDOW));
    if (candidates === undefined) continue;
    for (const needle of candidates) if (text.startsWith(needle, i)) found.add(needle);
  }
  return [...found];
}
