import { ed25519SignSync, hmacSync, requireSyncCrypto } from "#crypto";
import { InvalidArgumentError } from "./errors.js";
import { concatBytes } from "./internal/bytes.js";
import { decodeSigningKeys } from "./internal/decode-key.js";
import { toTimestampSeconds } from "./timestamp.js";
import { toBytes } from "./verifier.js";

/**
 * The exact Standard Webhooks header set a sender attaches to a request. A type alias rather than an
 * interface so it stays assignable to `HeadersLike` and `Record<string, string>` (fetch, undici).
 */
export type WebhookHeaders = {
  "webhook-id": string;
  "webhook-timestamp": string;
  /** Space-separated `v1,<base64>` / `v1a,<base64>` signatures, one per key. */
  "webhook-signature": string;
};

/** Signs messages with keys decoded once; see `createSigner`. */
export interface Signer {
  /** Signs `id.timestampSeconds.body` with every key and returns the headers to send. */
  sign(id: string, timestampSeconds: number, body: Uint8Array | string): WebhookHeaders;
}

// Visible ASCII only: the id is sent as a header value and is part of the signed content, so
// spaces or control characters would either break the request or sign something ambiguous.
const MESSAGE_ID = /^[\x21-\x7e]+$/;

/**
 * Decodes the keys once and returns a signer for the sender's hot path. `whsec_` (or bare base64)
 * secrets produce `v1` HMAC-SHA256 signatures, `whsk_` keys produce `v1a` Ed25519 signatures;
 * several keys (rotation) produce several space-separated signatures, in key order. Signing needs
 * node:crypto (Node, Deno, Bun): elsewhere it throws `SYNC_CRYPTO_UNAVAILABLE`.
 *
 * @example
 * const signer = createSigner([process.env.WEBHOOK_SECRET!]);
 * const headers = signer.sign("msg_2Lh...", Math.floor(Date.now() / 1000), body);
 */
export function createSigner(keys: string | readonly string[]): Signer {
  requireSyncCrypto("createSigner()");
  const decoded = decodeSigningKeys(keys);
  const needsContent = decoded.some((key) => key.kind === "ed25519");
  return {
    sign(id, timestampSeconds, body) {
      if (!MESSAGE_ID.test(id)) {
        throw new InvalidArgumentError(
          "webhook id must be a non-empty string of visible ASCII characters (no spaces or control characters).",
        );
      }
      const timestamp = String(toTimestampSeconds(timestampSeconds));
      const prefix = `${id}.${timestamp}.`;
      const bytes = toBytes(body);
      // Ed25519 signs one buffer, so the signed content is materialised only when a v1a key needs it;
      // HMAC streams the prefix and the body without copying.
      const content = needsContent ? concatBytes([prefix, bytes]) : undefined;
      let signature = "";
      for (const key of decoded) {
        if (signature !== "") signature += " ";
        if (key.kind === "hmac") {
          signature += "v1," + hmacSync(key.key, "sha256", "base64", [prefix, bytes]);
        } else {
          signature += "v1a," + ed25519SignSync(key.key, content!);
        }
      }
      return { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": signature };
    },
  };
}

/** Input of the one-shot `sign()`. */
export interface SignInput {
  /** Message id, stable across retries: receivers deduplicate on it. */
  id: string;
  /** A `Date` or integer seconds since the epoch (not milliseconds). */
  timestamp: Date | number;
  /** The exact bytes to send; a string is encoded as UTF-8. */
  body: Uint8Array | string;
  /** One or more `whsec_` secrets and/or `whsk_` Ed25519 private keys. */
  keys: string | readonly string[];
}

/**
 * Signs one message and returns the headers to send. Decodes the keys on every call: a sender
 * signing many messages should hold a `createSigner()` instead.
 *
 * @example
 * const headers = sign({ id: "msg_1", timestamp: new Date(), body: '{"type":"ping"}', keys: secret });
 * await fetch(url, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body });
 */
export function sign(input: SignInput): WebhookHeaders {
  requireSyncCrypto("sign()");
  return createSigner(input.keys).sign(input.id, toTimestampSeconds(input.timestamp), input.body);
}
