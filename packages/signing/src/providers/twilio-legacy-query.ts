/**
 * `querystring.stringify(querystring.parse(query))` of Node's legacy `node:querystring`, without
 * importing it: twilio-node checks a signature over a URL whose query was re-encoded that way, and
 * the verifiers must run where `node:` modules do not exist. It follows Node's parser (`+` is a
 * space, only a key or value holding a valid `%XX` is decoded, invalid UTF-8 decodes byte by byte,
 * 1000 pairs at most) and its serialiser (`encodeURIComponent`'s alphabet, keys in object order, so
 * integer-like keys first) for the ASCII queries `new URL()` writes, which is all it is given; a
 * property test compares it with node:querystring.
 */
const MAX_PAIRS = 1000;
const bytewise = new TextDecoder("utf-8", { ignoreBOM: true });

/** Re-encodes a query string (without its `?`) as Node's legacy querystring round trip does. */
export function reencodeLegacyQuery(query: string): string {
  const pairs: string[] = [];
  for (const [key, values] of Object.entries(parse(query))) {
    for (const value of typeof values === "string" ? [values] : values) {
      pairs.push(`${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
    }
  }
  return pairs.join("&");
}

function parse(query: string): Record<string, string | string[]> {
  // A null prototype, as Node's: "__proto__" is an ordinary key, and key order is object order.
  const result: Record<string, string | string[]> = Object.create(null);
  let remaining = MAX_PAIRS;
  const pieces = query.split("&");
  for (const [index, piece] of pieces.entries()) {
    // Empty pieces count towards the limit but add nothing; a trailing one does not count.
    if (piece === "") {
      if (index < pieces.length - 1 && --remaining === 0) return result;
      continue;
    }
    const equals = piece.indexOf("=");
    const rawKey = equals === -1 ? piece : piece.slice(0, equals);
    const rawValue = equals === -1 ? "" : piece.slice(equals + 1);
    const key = decode(rawKey);
    const value = decode(rawValue);
    const existing = result[key];
    if (existing === undefined) result[key] = value;
    else if (typeof existing === "string") result[key] = [existing, value];
    else existing.push(value);
    if (--remaining === 0) return result;
  }
  return result;
}

/** `+` is a space; the rest is decoded only when it holds a valid escape, as Node does. */
function decode(text: string): string {
  const spaced = text.replace(/\+/g, " ");
  if (!/%[0-9a-fA-F]{2}/.test(text)) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return decodeBytewise(spaced);
  }
}

/** Node's `unescapeBuffer`: each valid `%XX` is a byte, every other UTF-16 unit its low byte. */
function decodeBytewise(text: string): string {
  const bytes: number[] = [];
  for (let index = 0; index < text.length; index++) {
    const escaped = text[index] === "%" ? /^[0-9a-fA-F]{2}/.exec(text.slice(index + 1, index + 3)) : null;
    if (escaped) {
      bytes.push(Number.parseInt(escaped[0], 16));
      index += 2;
    } else {
      bytes.push(text.charCodeAt(index) & 0xff);
    }
  }
  return bytewise.decode(new Uint8Array(bytes));
}
