const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Decodes standard base64 (padding optional) and returns undefined for anything else. Node's own
 * decoder silently skips invalid characters, which would let a mangled key or signature decode to
 * *something*; keys must round-trip exactly or be rejected with a message.
 */
export function decodeBase64Strict(text: string): Buffer | undefined {
  if (!BASE64.test(text)) return undefined;
  const unpadded = text.replace(/=+$/, "");
  if (unpadded.length !== text.length && text.length % 4 !== 0) return undefined;
  if (unpadded.length % 4 === 1) return undefined;
  const bytes = Buffer.from(unpadded, "base64");
  // Rejects non-canonical encodings whose unused trailing bits are not zero.
  if (bytes.toString("base64").replace(/=+$/, "") !== unpadded) return undefined;
  return bytes;
}
