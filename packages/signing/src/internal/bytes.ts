const encoder = new TextEncoder();
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/** A string's UTF-8 bytes. Off the hot path; there, `utf8` of `#crypto` is faster on Node. */
export function encodeUtf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Lower-case hex, as providers write their digests. */
export function encodeHex(bytes: Uint8Array): string {
  let hex = "";
  for (const byte of bytes) hex += HEX[byte]!;
  return hex;
}

/** One buffer from several, for APIs (Web Crypto, Ed25519) that take the signed content whole. */
export function concatBytes(parts: readonly (string | Uint8Array)[]): Uint8Array {
  // Text is encoded straight into place (at most 3 bytes per UTF-16 unit), with no buffer of its own.
  let size = 0;
  for (const part of parts) size += typeof part === "string" ? part.length * 3 : part.byteLength;
  const joined = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    if (typeof part === "string") {
      offset += encoder.encodeInto(part, joined.subarray(offset)).written;
    } else {
      joined.set(part, offset);
      offset += part.byteLength;
    }
  }
  return joined.subarray(0, offset);
}

/** Byte equality for public values (keys), where timing reveals nothing; secrets use `timingSafeEqual`. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && a.every((byte, index) => byte === b[index]);
}

// ignoreBOM keeps a leading BOM as a character, as Buffer#toString does, instead of dropping it.
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** Bytes as UTF-8 text, invalid sequences replaced (U+FFFD), nothing dropped. */
export function fromUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}
