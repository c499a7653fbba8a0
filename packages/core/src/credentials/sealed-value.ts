import { createCipheriv, createDecipheriv, type KeyObject, randomBytes } from "node:crypto";

/**
 * The stored form of an encrypted credential: `pcv1.<key id>.<base64url(iv | ciphertext | tag)>`,
 * AES-256-GCM with a random 96-bit IV per value. Printable ASCII, so it is a well-formed stored
 * string wherever the plaintext was. The additional data binds it to its place (endpoint and field)
 * and to its key id, so a value copied to another row, another header or another secret fails to
 * decrypt instead of yielding the wrong plaintext.
 */
const VERSION = "pcv1";
const IV_BYTES = 12;
const TAG_BYTES = 16;
// At least an IV and a tag (28 bytes: 38 base64url characters) after the key id.
const SEALED = /^pcv1\.([A-Za-z0-9_-]{1,32})\.([A-Za-z0-9_-]{38,})$/;

/** Key ids: short, printable, safe inside the stored form. */
export const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

/** The key id of a sealed value, or null when `stored` is plaintext (a row written before encryption). */
export function sealedKeyId(stored: string): string | null {
  if (!stored.startsWith(`${VERSION}.`)) return null;
  return SEALED.exec(stored)?.[1] ?? null;
}

/** `plaintext` encrypted under `key` (named `keyId`) for `place`. */
export function seal(key: KeyObject, keyId: string, plaintext: string, place: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(additionalData(keyId, place));
  const body = Buffer.concat([iv, cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return `${VERSION}.${keyId}.${body.toString("base64url")}`;
}

/**
 * The plaintext of a sealed value, or null when it does not authenticate (the wrong key, an altered
 * value, a value sealed for another place).
 */
export function open(key: KeyObject, stored: string, place: string): string | null {
  const match = SEALED.exec(stored);
  if (match === null) return null;
  const body = Buffer.from(match[2]!, "base64url");
  if (body.length < IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, body.subarray(0, IV_BYTES), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(additionalData(match[1]!, place));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    const text = Buffer.concat([
      decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)),
      decipher.final(),
    ]);
    return text.toString("utf8");
  } catch {
    return null;
  }
}

function additionalData(keyId: string, place: string): Buffer {
  return Buffer.from(`${VERSION}.${keyId}\n${place}`, "utf8");
}

/** Where an endpoint's signing secret lives (secrets are told apart by their creation time). */
export function secretPlace(endpointId: string, createdAt: number): string {
  return `endpoint:${endpointId}:secret:${createdAt}`;
}

/** Where an endpoint's custom header value lives (header names are case-insensitive). */
export function headerPlace(endpointId: string, name: string): string {
  return `endpoint:${endpointId}:header:${name.toLowerCase()}`;
}
