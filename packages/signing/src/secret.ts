import { InvalidKeyError } from "./errors.js";
import { decodeBase64Strict, encodeBase64 } from "./internal/base64.js";

/** Prefix of Standard Webhooks symmetric (HMAC-SHA256, `v1`) secrets. */
export const SECRET_PREFIX = "whsec_";

/**
 * The fewest key bytes a `whsec_` secret may have: the Standard Webhooks specification asks for
 * secrets of 24 to 64 random bytes. `generateSecret()` makes 32.
 */
export const MIN_SECRET_BYTES = 24;

/**
 * Generates a new symmetric signing secret: 32 random bytes, base64, prefixed `whsec_`.
 *
 * @example
 * const secret = generateSecret(); // "whsec_0X3Jx...="
 */
export function generateSecret(): string {
  return SECRET_PREFIX + encodeBase64(globalThis.crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * Decodes a `whsec_<base64>` secret, or a bare base64 secret as the reference Standard Webhooks
 * libraries accept, into the HMAC key bytes. `label` names the key in messages ("keys[1]") because
 * the secret itself must never appear in one.
 */
export function decodeSecret(secret: string, label = "secret"): Uint8Array {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  assertNoWhitespace(encoded, label);
  const bytes = decodeBase64Strict(encoded);
  if (bytes === undefined) {
    throw new InvalidKeyError(
      `${label} is not a Standard Webhooks secret: expected "whsec_" followed by standard base64 ` +
        "(A-Z a-z 0-9 + /, optional = padding). Copy the secret again exactly as issued.",
    );
  }
  if (bytes.length === 0) {
    throw new InvalidKeyError(`${label} is empty: a whsec_ secret needs key bytes after the prefix.`);
  }
  if (bytes.length < MIN_SECRET_BYTES) {
    // A 3-byte HMAC key is guessed offline from one signed request: refuse it on both sides.
    throw new InvalidKeyError(
      `${label} decodes to ${bytes.length} byte${bytes.length === 1 ? "" : "s"}; Standard Webhooks ` +
        `secrets must be at least ${MIN_SECRET_BYTES} random bytes (base64 of 32 bytes is 44 characters). ` +
        "Create one with generateSecret() from @postel/signing, or ask the sender for the full secret.",
    );
  }
  return bytes;
}

/**
 * Whitespace is the most common way a pasted secret goes wrong (a trailing newline from an env
 * file), so it gets its own message instead of a generic "not base64".
 */
export function assertNoWhitespace(encoded: string, label: string): void {
  if (/\s/.test(encoded)) {
    throw new InvalidKeyError(
      `${label} contains whitespace (often a trailing newline from an env file or a copy-paste); ` +
        "remove it and pass the key exactly as issued.",
    );
  }
}
