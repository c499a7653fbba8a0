const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const VALUES = new Int8Array(128).fill(-1);
for (let index = 0; index < ALPHABET.length; index++) VALUES[ALPHABET.charCodeAt(index)] = index;
const EQUALS = 61;

// Table-driven rather than `atob`/`btoa`: those are several times slower on Node 20 (a signature
// is decoded on every v1a request) and lenient, which a strict decoder cannot be.

/**
 * Decodes standard base64 (padding optional, but then complete) and returns undefined for anything
 * else, non-canonical encodings (unused trailing bits set) included. Lenient decoders skip or
 * tolerate invalid input, which would let a mangled key or signature decode to *something*; keys
 * must round-trip exactly or be rejected with a message.
 */
export function decodeBase64Strict(text: string): Uint8Array | undefined {
  let length = text.length;
  if (length > 0 && text.charCodeAt(length - 1) === EQUALS) {
    if (length % 4 !== 0) return undefined;
    length -= text.charCodeAt(length - 2) === EQUALS ? 2 : 1;
  }
  if (length % 4 === 1) return undefined;
  const bytes = new Uint8Array((length * 3) >> 2);
  let buffer = 0;
  let bits = 0;
  let written = 0;
  for (let index = 0; index < length; index++) {
    const code = text.charCodeAt(index);
    const value = code < 128 ? VALUES[code]! : -1;
    if (value === -1) return undefined;
    buffer = ((buffer << 6) | value) & 0xfff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes[written++] = buffer >> bits;
    }
  }
  return (buffer & ((1 << bits) - 1)) === 0 ? bytes : undefined;
}

/** Standard base64 with padding, as `Buffer#toString("base64")` writes it. */
export function encodeBase64(bytes: Uint8Array): string {
  let text = "";
  let index = 0;
  for (; index + 2 < bytes.length; index += 3) {
    const group = (bytes[index]! << 16) | (bytes[index + 1]! << 8) | bytes[index + 2]!;
    text +=
      ALPHABET[group >> 18]! +
      ALPHABET[(group >> 12) & 63]! +
      ALPHABET[(group >> 6) & 63]! +
      ALPHABET[group & 63]!;
  }
  const rest = bytes.length - index;
  if (rest > 0) {
    const group = (bytes[index]! << 16) | (rest === 2 ? bytes[index + 1]! << 8 : 0);
    text += ALPHABET[group >> 18]! + ALPHABET[(group >> 12) & 63]!;
    text += rest === 2 ? `${ALPHABET[(group >> 6) & 63]!}=` : "==";
  }
  return text;
}
