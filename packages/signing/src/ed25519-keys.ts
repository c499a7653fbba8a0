import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { InvalidKeyError } from "./errors.js";
import { decodeBase64Strict } from "./internal/base64.js";
import { assertNoWhitespace } from "./secret.js";

/** Prefix of Standard Webhooks Ed25519 private keys (`v1a` signing). */
export const PRIVATE_KEY_PREFIX = "whsk_";
/** Prefix of Standard Webhooks Ed25519 public keys (`v1a` verification). */
export const PUBLIC_KEY_PREFIX = "whpk_";

// DER headers that turn raw 32-byte Ed25519 material into PKCS#8 / SPKI, so node:crypto can import
// a seed or public key without a JWK round trip (RFC 8410).
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

/** An Ed25519 key pair in Standard Webhooks string form. */
export interface Ed25519KeyPair {
  /** `whsk_` + base64 of the 32-byte seed. Keep it on the sender. */
  privateKey: string;
  /** `whpk_` + base64 of the 32-byte public key. Give it to receivers. */
  publicKey: string;
}

/**
 * Generates an Ed25519 key pair for asymmetric (`v1a`) signatures.
 *
 * @example
 * const { privateKey, publicKey } = generateKeyPair(); // "whsk_...", "whpk_..."
 */
export function generateKeyPair(): Ed25519KeyPair {
  const { privateKey } = generateKeyPairSync("ed25519");
  const seed = privateKey.export({ format: "der", type: "pkcs8" }).subarray(PKCS8_PREFIX.length);
  return {
    privateKey: PRIVATE_KEY_PREFIX + seed.toString("base64"),
    publicKey: PUBLIC_KEY_PREFIX + rawPublicKey(privateKey).toString("base64"),
  };
}

/**
 * Derives the `whpk_` public key that receivers need from a `whsk_` private key.
 *
 * @example
 * const publicKey = publicKeyFromPrivate(process.env.WEBHOOK_PRIVATE_KEY!);
 */
export function publicKeyFromPrivate(privateKey: string): string {
  return PUBLIC_KEY_PREFIX + rawPublicKey(decodePrivateKey(privateKey)).toString("base64");
}

/**
 * Imports a `whsk_` key. Both the 32-byte seed and the 64-byte seed+public form (libsodium's
 * layout) are accepted; in the long form the public half must match the seed, otherwise the pair
 * was spliced together wrongly and every signature would fail to verify downstream.
 */
export function decodePrivateKey(privateKey: string, label = "private key"): KeyObject {
  const bytes = decodePrefixed(privateKey, PRIVATE_KEY_PREFIX, label);
  if (bytes.length !== 32 && bytes.length !== 64) {
    throw new InvalidKeyError(
      `${label} decodes to ${bytes.length} bytes; an Ed25519 whsk_ key is a 32-byte seed ` +
        "(or 64 bytes: seed followed by its public key).",
    );
  }
  const key = createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, bytes.subarray(0, 32)]),
    format: "der",
    type: "pkcs8",
  });
  if (bytes.length === 64 && !rawPublicKey(key).equals(bytes.subarray(32))) {
    throw new InvalidKeyError(
      `${label} is a 64-byte whsk_ key whose last 32 bytes are not the public key of its seed; ` +
        "export the key again, or pass only the 32-byte seed.",
    );
  }
  return key;
}

/** Imports a `whpk_` key (32 raw bytes) for `v1a` verification. */
export function decodePublicKey(publicKey: string, label = "public key"): KeyObject {
  const bytes = decodePrefixed(publicKey, PUBLIC_KEY_PREFIX, label);
  if (bytes.length !== 32) {
    throw new InvalidKeyError(`${label} decodes to ${bytes.length} bytes; an Ed25519 whpk_ key is 32 bytes.`);
  }
  return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, bytes]), format: "der", type: "spki" });
}

function rawPublicKey(privateKey: KeyObject): Buffer {
  return createPublicKey(privateKey).export({ format: "der", type: "spki" }).subarray(SPKI_PREFIX.length);
}

function decodePrefixed(key: string, prefix: string, label: string): Buffer {
  if (!key.startsWith(prefix)) {
    throw new InvalidKeyError(`${label} must start with "${prefix}".`);
  }
  const encoded = key.slice(prefix.length);
  assertNoWhitespace(encoded, label);
  const bytes = decodeBase64Strict(encoded);
  if (bytes === undefined) {
    throw new InvalidKeyError(
      `${label} is not valid: expected "${prefix}" followed by standard base64 (A-Z a-z 0-9 + /).`,
    );
  }
  return bytes;
}
