import { ed25519PrivateKey, ed25519PublicKey, ed25519RawPublicKeySync, requireSyncCrypto } from "#crypto";
import { InvalidKeyError } from "./errors.js";
import { decodeBase64Strict, encodeBase64 } from "./internal/base64.js";
import { sameBytes } from "./internal/bytes.js";
import type { Ed25519PrivateKey, Ed25519PublicKey } from "./internal/crypto.js";
import { assertNoWhitespace } from "./secret.js";

/** Prefix of Standard Webhooks Ed25519 private keys (`v1a` signing). */
export const PRIVATE_KEY_PREFIX = "whsk_";
/** Prefix of Standard Webhooks Ed25519 public keys (`v1a` verification). */
export const PUBLIC_KEY_PREFIX = "whpk_";

/** An Ed25519 key pair in Standard Webhooks string form. */
export interface Ed25519KeyPair {
  /** `whsk_` + base64 of the 32-byte seed. Keep it on the sender. */
  privateKey: string;
  /** `whpk_` + base64 of the 32-byte public key. Give it to receivers. */
  publicKey: string;
}

/**
 * Generates an Ed25519 key pair for asymmetric (`v1a`) signatures. Needs node:crypto (Node, Deno,
 * Bun): elsewhere it throws `SYNC_CRYPTO_UNAVAILABLE`.
 *
 * @example
 * const { privateKey, publicKey } = generateKeyPair(); // "whsk_...", "whpk_..."
 */
export function generateKeyPair(): Ed25519KeyPair {
  requireSyncCrypto("generateKeyPair()");
  // An Ed25519 private key is 32 random bytes (RFC 8032), which is what node:crypto's generator makes.
  const seed = globalThis.crypto.getRandomValues(new Uint8Array(32));
  return {
    privateKey: PRIVATE_KEY_PREFIX + encodeBase64(seed),
    publicKey: PUBLIC_KEY_PREFIX + encodeBase64(ed25519RawPublicKeySync(ed25519PrivateKey(seed))),
  };
}

/**
 * Derives the `whpk_` public key that receivers need from a `whsk_` private key. Needs node:crypto
 * (Node, Deno, Bun): elsewhere it throws `SYNC_CRYPTO_UNAVAILABLE`.
 *
 * @example
 * const publicKey = publicKeyFromPrivate(process.env.WEBHOOK_PRIVATE_KEY!);
 */
export function publicKeyFromPrivate(privateKey: string): string {
  requireSyncCrypto("publicKeyFromPrivate()");
  return PUBLIC_KEY_PREFIX + encodeBase64(ed25519RawPublicKeySync(decodePrivateKey(privateKey)));
}

/**
 * Imports a `whsk_` key for signing. Both the 32-byte seed and the 64-byte seed+public form
 * (libsodium's layout) are accepted; in the long form the public half must match the seed,
 * otherwise the pair was spliced together wrongly and every signature would fail to verify downstream.
 */
export function decodePrivateKey(privateKey: string, label = "private key"): Ed25519PrivateKey {
  const { seed, claimedPublicKey } = decodePrivateKeyBytes(privateKey, label);
  const key = ed25519PrivateKey(seed);
  if (claimedPublicKey !== undefined && !sameBytes(ed25519RawPublicKeySync(key), claimedPublicKey)) {
    throw keyPairMismatch(label);
  }
  return key;
}

/**
 * A `whsk_` key's seed and, in the 64-byte form, the public half it claims; checking the claim
 * needs the curve, so it is left to the caller (at once with node:crypto, on first use with Web Crypto).
 */
export function decodePrivateKeyBytes(
  privateKey: string,
  label = "private key",
): { seed: Uint8Array; claimedPublicKey: Uint8Array | undefined } {
  const bytes = decodePrefixed(privateKey, PRIVATE_KEY_PREFIX, label);
  if (bytes.length !== 32 && bytes.length !== 64) {
    throw new InvalidKeyError(
      `${label} decodes to ${bytes.length} bytes; an Ed25519 whsk_ key is a 32-byte seed ` +
        "(or 64 bytes: seed followed by its public key).",
    );
  }
  return {
    seed: bytes.subarray(0, 32),
    claimedPublicKey: bytes.length === 64 ? bytes.subarray(32) : undefined,
  };
}

/** The error for a 64-byte `whsk_` key whose public half is not its seed's. */
export function keyPairMismatch(label: string): InvalidKeyError {
  return new InvalidKeyError(
    `${label} is a 64-byte whsk_ key whose last 32 bytes are not the public key of its seed; ` +
      "export the key again, or pass only the 32-byte seed.",
  );
}

/** Imports a `whpk_` key (32 raw bytes) for `v1a` verification. */
export function decodePublicKey(publicKey: string, label = "public key"): Ed25519PublicKey {
  const bytes = decodePrefixed(publicKey, PUBLIC_KEY_PREFIX, label);
  if (bytes.length !== 32) {
    throw new InvalidKeyError(`${label} decodes to ${bytes.length} bytes; an Ed25519 whpk_ key is 32 bytes.`);
  }
  return ed25519PublicKey(bytes);
}

function decodePrefixed(key: string, prefix: string, label: string): Uint8Array {
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
