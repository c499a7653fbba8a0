/**
 * Checks a Standard Webhooks request's signatures against the configured keys: `firstMatch` with
 * node:crypto for `verify`, `keyHitsAsync` with Web Crypto for `verifyAsync`. Both try every
 * signature against every key; `verify.ts` parses the header and decides the outcome for both.
 */
import { ed25519Verify, ed25519VerifySync, hmac, hmacSync, timingSafeEqual, utf8 } from "#crypto";
import { concatBytes } from "./bytes.js";
import type { DecodedKey } from "./decode-key.js";

/** The signatures of a `webhook-signature` header, by version; a `v1a` one that is not base64 is undefined. */
export interface Signatures {
  v1: Uint8Array[];
  v1a: (Uint8Array | undefined)[];
}

/** What the headers say was signed, read and checked before any crypto runs. */
export interface SignedRequest {
  id: string;
  seconds: number;
  /** `id.timestamp.`, signed before the body. */
  prefix: string;
  signatures: Signatures;
}

/**
 * Tries every signature against every key without stopping at the first hit, so timing does not
 * reveal which key matched, and returns the first key in configuration order that matched, or -1.
 */
export function firstMatch(keys: readonly DecodedKey[], signed: SignedRequest, body: Uint8Array): number {
  const { prefix, signatures } = signed;
  const content = ed25519Content(keys, signed, body);
  let keyIndex = -1;
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!;
    let hit = false;
    if (key.kind === "hmac") {
      if (signatures.v1.length > 0) {
        const expected = utf8(hmacSync(key.key, "sha256", "base64", [prefix, body]));
        for (const candidate of signatures.v1) hit = timingSafeEqual(expected, candidate) || hit;
      }
    } else if (content !== undefined) {
      for (const candidate of signatures.v1a) {
        hit = (candidate?.length === 64 && ed25519VerifySync(key.key, content, candidate)) || hit;
      }
    }
    if (hit && keyIndex === -1) keyIndex = index;
  }
  return keyIndex;
}

/** For each key, whether any signature matched it, over Web Crypto: every pair checked, in parallel. */
export function keyHitsAsync(
  keys: readonly DecodedKey[],
  signed: SignedRequest,
  body: Uint8Array,
): Promise<boolean[]> {
  const { prefix, signatures } = signed;
  const content = ed25519Content(keys, signed, body);
  return Promise.all(
    keys.map(async (key) => {
      if (key.kind === "hmac") {
        if (signatures.v1.length === 0) return false;
        const expected = utf8(await hmac(key.key, "sha256", "base64", [prefix, body]));
        let hit = false;
        for (const candidate of signatures.v1) hit = timingSafeEqual(expected, candidate) || hit;
        return hit;
      }
      if (content === undefined) return false;
      const results = await Promise.all(
        signatures.v1a.map((candidate) =>
          candidate?.length === 64 ? ed25519Verify(key.key, content, candidate) : false,
        ),
      );
      return results.includes(true);
    }),
  );
}

/** Ed25519 signs one buffer, so the signed content is materialised only when a v1a check needs it. */
function ed25519Content(keys: readonly DecodedKey[], signed: SignedRequest, body: Uint8Array) {
  return signed.signatures.v1a.length > 0 && keys.some((key) => key.kind === "ed25519")
    ? concatBytes([signed.prefix, body])
    : undefined;
}
