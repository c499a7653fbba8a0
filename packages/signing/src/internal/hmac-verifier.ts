import { asyncPath, hmac, hmacKey, hmacSync, requireSyncCrypto, utf8 } from "#crypto";
import type { VerifiedWebhook, Verifier, WebhookRequest } from "../verifier.js";
import type { DigestEncoding, HmacHash, HmacKey, SignedParts } from "./crypto.js";

/** HMACs `parts` with every key and returns each digest as the encoded text the provider sends. */
function hmacEach(
  keys: readonly HmacKey[],
  hash: HmacHash,
  encoding: DigestEncoding,
  parts: SignedParts,
): Uint8Array[] {
  return keys.map((key) => utf8(hmacSync(key, hash, encoding, parts)));
}

/** `hmacEach` over Web Crypto, every key in parallel. */
function hmacEachAsync(
  keys: readonly HmacKey[],
  hash: HmacHash,
  encoding: DigestEncoding,
  parts: SignedParts,
): Promise<Uint8Array[]> {
  return Promise.all(keys.map(async (key) => utf8(await hmac(key, hash, encoding, parts))));
}

/** How a provider that HMACs one message per key verifies: the parts between the crypto are shared. */
export interface HmacScheme<Signed extends { parts: SignedParts }> {
  scheme: string;
  keys: readonly HmacKey[];
  hash: HmacHash;
  encoding: DigestEncoding;
  /** Reads and checks the headers (and the replay window) and says what was signed; no crypto. */
  read(request: WebhookRequest, now: number): Signed;
  /** Compares the digests, one per key, with what the headers carry; throws SIGNATURE_INVALID. */
  decide(signed: Signed, digests: readonly Uint8Array[], request: WebhookRequest): VerifiedWebhook;
}

/**
 * A verifier whose `verify` (node:crypto) and `verifyAsync` (Web Crypto) run the same `read` and
 * `decide`, so both throw the same codes; only the HMACs in between differ.
 */
export function hmacVerifier<Signed extends { parts: SignedParts }>(
  scheme: HmacScheme<Signed>,
): Required<Verifier> {
  const { keys, hash, encoding, read, decide } = scheme;
  const verify = (request: WebhookRequest, now: number): VerifiedWebhook => {
    requireSyncCrypto(`${scheme.scheme}().verify()`);
    const signed = read(request, now);
    return decide(signed, hmacEach(keys, hash, encoding, signed.parts), request);
  };
  return {
    scheme: scheme.scheme,
    verify,
    verifyAsync: asyncPath(verify, async (request, now) => {
      const signed = read(request, now);
      return decide(signed, await hmacEachAsync(keys, hash, encoding, signed.parts), request);
    }),
  };
}

/** The digest text a provider would send for `secret`, for the providers' `sign` test helpers. */
export function providerDigest(
  api: string,
  secret: string,
  hash: HmacHash,
  encoding: DigestEncoding,
  parts: SignedParts,
): string {
  requireSyncCrypto(api);
  return hmacSync(hmacKey(utf8(secret)), hash, encoding, parts);
}
