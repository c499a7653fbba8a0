import { ed25519PrivateKey, ed25519PublicKeyOf, hmacKey } from "#crypto";
import {
  decodePrivateKey,
  decodePrivateKeyBytes,
  decodePublicKey,
  keyPairMismatch,
  PRIVATE_KEY_PREFIX,
  PUBLIC_KEY_PREFIX,
} from "../ed25519-keys.js";
import { InvalidKeyError } from "../errors.js";
import { decodeSecret } from "../secret.js";
import type { Ed25519PrivateKey, Ed25519PublicKey, HmacKey } from "./crypto.js";

/** A verifying key decoded once, ready for the hot path. */
export type DecodedKey = { kind: "hmac"; key: HmacKey } | { kind: "ed25519"; key: Ed25519PublicKey };
/** A signing key decoded once. */
export type SigningKey = { kind: "hmac"; key: HmacKey } | { kind: "ed25519"; key: Ed25519PrivateKey };

/** Accepts one key or a list (rotation) and refuses an empty list, which could never verify. */
export function keyList(keys: string | readonly string[]): readonly string[] {
  const list = typeof keys === "string" ? [keys] : keys;
  if (list.length === 0) {
    throw new InvalidKeyError("No keys were given: pass at least one whsec_ secret or Ed25519 key.");
  }
  for (const [index, key] of list.entries()) {
    if (typeof key !== "string") {
      throw new InvalidKeyError(`${label(list, index)} is a ${typeof key}, not a key string.`);
    }
  }
  return list;
}

/** A `whsec_`/bare secret becomes an HMAC key and a `whsk_` key an Ed25519 private key. */
export function decodeSigningKeys(keys: string | readonly string[]): SigningKey[] {
  const list = keyList(keys);
  return list.map((key, index) => {
    const name = label(list, index);
    if (key.startsWith(PUBLIC_KEY_PREFIX)) {
      throw new InvalidKeyError(
        `${name} is a whpk_ public key, which can only verify; sign with the matching whsk_ private key.`,
      );
    }
    if (key.startsWith(PRIVATE_KEY_PREFIX)) return { kind: "ed25519", key: decodePrivateKey(key, name) };
    return { kind: "hmac", key: hmacKey(decodeSecret(key, name)) };
  });
}

/**
 * A `whsec_`/bare secret becomes an HMAC key and a `whpk_` key an Ed25519 public key. A `whsk_`
 * private key is accepted too (its public half is derived) so one config value can serve both sides.
 */
export function decodeVerifyingKeys(keys: string | readonly string[]): DecodedKey[] {
  const list = keyList(keys);
  return list.map((key, index) => {
    const name = label(list, index);
    if (key.startsWith(PUBLIC_KEY_PREFIX)) return { kind: "ed25519", key: decodePublicKey(key, name) };
    if (key.startsWith(PRIVATE_KEY_PREFIX)) {
      const { seed, claimedPublicKey } = decodePrivateKeyBytes(key, name);
      const publicKey = ed25519PublicKeyOf(ed25519PrivateKey(seed), claimedPublicKey, () =>
        keyPairMismatch(name),
      );
      return { kind: "ed25519", key: publicKey };
    }
    return { kind: "hmac", key: hmacKey(decodeSecret(key, name)) };
  });
}

function label(list: readonly unknown[], index: number): string {
  return list.length === 1 ? "key" : `keys[${index}]`;
}
