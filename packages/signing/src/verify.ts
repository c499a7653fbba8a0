import { asyncPath, requireSyncCrypto, utf8 } from "#crypto";
import { WebhookVerificationError } from "./errors.js";
import type { HeadersLike } from "./headers.js";
import { requireHeader } from "./headers.js";
import { decodeBase64Strict } from "./internal/base64.js";
import { type DecodedKey, decodeVerifyingKeys } from "./internal/decode-key.js";
import {
  firstMatch,
  keyHitsAsync,
  type SignedRequest,
  type Signatures,
} from "./internal/match-signatures.js";
import {
  assertInWindow,
  DEFAULT_TOLERANCE_MS,
  parseTimestampSeconds,
  resolveTolerance,
} from "./timestamp.js";
import { toBytes, type VerifiedWebhook, type Verifier, type WebhookRequest } from "./verifier.js";

/** A verified Standard Webhooks request: every field is known. */
export interface StandardWebhookVerification extends VerifiedWebhook {
  scheme: "standard-webhooks";
  /** The `webhook-id` header: deduplicate on it. */
  id: string;
  timestamp: Date;
  /** Which signature version matched: `v1` (HMAC-SHA256) or `v1a` (Ed25519). */
  version: "v1" | "v1a";
}

/** Options of `createVerifier`. */
export interface VerifierOptions {
  /** Accepted clock skew either side of `now`, in milliseconds. Default 300 000 (5 minutes). */
  tolerance?: number;
}

/** A `Verifier` for Standard Webhooks, with the richer result type. */
export interface StandardWebhooksVerifier extends Verifier {
  readonly scheme: "standard-webhooks";
  verify(request: WebhookRequest, now: number): StandardWebhookVerification;
  /** `verify` on every runtime (Web Crypto off Node), rejecting with the same codes. */
  verifyAsync(request: WebhookRequest, now: number): Promise<StandardWebhookVerification>;
}

/**
 * Most entries of one version a webhook-signature header may carry. A sender signs once per active
 * key (two or three during a rotation), while every `v1a` entry costs an Ed25519 verification per
 * configured public key: an unbounded list would let anyone spend the receiver's CPU unsigned.
 */
const MAX_SIGNATURES_PER_VERSION = 16;

/**
 * Decodes the keys once and returns a Standard Webhooks verifier. Keys may be `whsec_` (or bare
 * base64) secrets for `v1`, and `whpk_` public keys (or `whsk_` private keys) for `v1a`; list
 * several during a rotation. Every signature in the header is tried against every key; a header with
 * more than 16 signatures of one version is refused (`MALFORMED_HEADER`) before any is checked.
 * `verify` needs node:crypto (Node, Deno, Bun); `verifyAsync` runs everywhere (Web Crypto elsewhere).
 *
 * @example
 * const verifier = createVerifier([process.env.WEBHOOK_SECRET!]);
 * const { id, timestamp } = verifier.verify({ body: rawBytes, headers: req.headers }, Date.now());
 * const onAWorker = await verifier.verifyAsync({ body: rawBytes, headers: request.headers }, Date.now());
 */
export function createVerifier(
  keys: string | readonly string[],
  options: VerifierOptions = {},
): StandardWebhooksVerifier {
  const decoded = decodeVerifyingKeys(keys);
  const tolerance = resolveTolerance(options.tolerance, DEFAULT_TOLERANCE_MS);
  const verify = (request: WebhookRequest, now: number): StandardWebhookVerification => {
    requireSyncCrypto("createVerifier().verify()");
    const signed = readSignedRequest(request, now, tolerance);
    return verified(decoded, signed, firstMatch(decoded, signed, request.body));
  };
  return {
    scheme: "standard-webhooks",
    verify,
    verifyAsync: asyncPath(verify, async (request, now) => {
      const signed = readSignedRequest(request, now, tolerance);
      return verified(decoded, signed, (await keyHitsAsync(decoded, signed, request.body)).indexOf(true));
    }),
  };
}

function readSignedRequest(request: WebhookRequest, now: number, tolerance: number): SignedRequest {
  const id = requireHeader(request.headers, "webhook-id");
  const timestampText = requireHeader(request.headers, "webhook-timestamp");
  const signatureHeader = requireHeader(request.headers, "webhook-signature", { join: " " });
  const seconds = parseTimestampSeconds(timestampText, "webhook-timestamp");
  assertInWindow(seconds, now, tolerance, "webhook-timestamp");
  return { id, seconds, prefix: `${id}.${timestampText}.`, signatures: parseSignatures(signatureHeader) };
}

/** `keyIndex` is the first key in configuration order that any signature matched, or -1. */
function verified(
  keys: readonly DecodedKey[],
  signed: SignedRequest,
  keyIndex: number,
): StandardWebhookVerification {
  if (keyIndex === -1) throw signatureInvalid(keys, signed.signatures);
  return {
    scheme: "standard-webhooks",
    id: signed.id,
    timestamp: new Date(signed.seconds * 1000),
    keyIndex,
    version: keys[keyIndex]!.kind === "hmac" ? "v1" : "v1a",
  };
}

/** Options of the one-shot `verify()`. */
export interface VerifyOptions extends VerifierOptions {
  /** One or more `whsec_` secrets and/or `whpk_` public keys. */
  keys: string | readonly string[];
  /** The receiver's clock: a `Date`, or a function returning epoch milliseconds. Default `Date.now`. */
  now?: Date | (() => number);
}

/**
 * Verifies one Standard Webhooks request and returns its id, timestamp, the signature version and
 * the index of the key that matched; throws `WebhookVerificationError` otherwise. Pass the body as
 * the exact received bytes: a string body is hashed as its UTF-8 encoding. Needs node:crypto (Node,
 * Deno, Bun): elsewhere it throws `SYNC_CRYPTO_UNAVAILABLE`, and `verifyAsync()` is the one to call.
 *
 * @example
 * const { id } = verify(rawBody, req.headers, { keys: process.env.WEBHOOK_SECRET! });
 */
export function verify(
  body: Uint8Array | string,
  headers: HeadersLike,
  options: VerifyOptions,
): StandardWebhookVerification {
  requireSyncCrypto("verify()");
  const verifier = createVerifier(
    options.keys,
    options.tolerance === undefined ? {} : { tolerance: options.tolerance },
  );
  const now = options.now === undefined ? Date.now() : resolveNow(options.now);
  return verifier.verify({ body: toBytes(body), headers }, now);
}

/**
 * `verify()` on every runtime: Web Crypto where node:crypto is absent (Cloudflare Workers, Vercel
 * Edge, browsers), node:crypto's synchronous path otherwise. Rejects with the same
 * `WebhookVerificationError` codes as `verify()`.
 *
 * @example
 * const { id } = await verifyAsync(rawBody, request.headers, { keys: env.WEBHOOK_SECRET });
 */
export async function verifyAsync(
  body: Uint8Array | string,
  headers: HeadersLike,
  options: VerifyOptions,
): Promise<StandardWebhookVerification> {
  const verifier = createVerifier(
    options.keys,
    options.tolerance === undefined ? {} : { tolerance: options.tolerance },
  );
  const now = options.now === undefined ? Date.now() : resolveNow(options.now);
  return verifier.verifyAsync({ body: toBytes(body), headers }, now);
}

function resolveNow(now: Date | (() => number)): number {
  return now instanceof Date ? now.getTime() : now();
}

/**
 * Splits the space-separated `version,signature` list. A second, trailing comma is dropped because
 * Node and fetch join a repeated header with ", ", which glues one onto every signature but the last.
 * Unknown versions are skipped so senders can add new ones without breaking receivers.
 */
function parseSignatures(header: string): Signatures {
  const signatures: Signatures = { v1: [], v1a: [] };
  for (const raw of header.split(/\s+/)) {
    const token = raw.endsWith(",") && raw.indexOf(",") < raw.length - 1 ? raw.slice(0, -1) : raw;
    const comma = token.indexOf(",");
    if (comma === -1) continue;
    const version = token.slice(0, comma);
    if (version !== "v1" && version !== "v1a") continue;
    if (signatures[version].length === MAX_SIGNATURES_PER_VERSION) throw tooManySignatures(version);
    const value = token.slice(comma + 1);
    if (version === "v1") signatures.v1.push(utf8(value));
    // Garbage still counts as a v1a signature (one that cannot match), so it ends as SIGNATURE_INVALID.
    else signatures.v1a.push(decodeBase64Strict(value));
  }
  if (signatures.v1.length === 0 && signatures.v1a.length === 0) {
    throw new WebhookVerificationError(
      "MALFORMED_HEADER",
      "The webhook-signature header has no signature of a supported version; expected space-separated " +
        '"v1,<base64>" (HMAC-SHA256) or "v1a,<base64>" (Ed25519) entries.',
      "webhook-signature",
    );
  }
  return signatures;
}

function tooManySignatures(version: "v1" | "v1a"): WebhookVerificationError {
  return new WebhookVerificationError(
    "MALFORMED_HEADER",
    `The webhook-signature header carries more than ${MAX_SIGNATURES_PER_VERSION} ${version} signatures, ` +
      "the most a request may carry: each one is checked against every key before the sender is " +
      "authenticated, so the list is capped. A sender signs once per active key; send only the " +
      "signatures of the keys in use.",
    "webhook-signature",
  );
}

function signatureInvalid(keys: readonly DecodedKey[], signatures: Signatures): WebhookVerificationError {
  const hasHmac = keys.some((key) => key.kind === "hmac");
  const hasEd25519 = keys.some((key) => key.kind === "ed25519");
  let hint =
    "Check that the key is the endpoint's current one and that the body is the exact bytes received, not re-serialised JSON.";
  if (signatures.v1.length === 0 && !hasEd25519) {
    hint = "The header carries only v1a (Ed25519) signatures, but no whpk_ public key is configured.";
  } else if (signatures.v1a.length === 0 && !hasHmac) {
    hint = "The header carries only v1 (HMAC) signatures, but no whsec_ secret is configured.";
  }
  return new WebhookVerificationError(
    "SIGNATURE_INVALID",
    `No signature in the webhook-signature header matched any of the ${keys.length} configured key(s). ${hint}`,
    "webhook-signature",
  );
}
