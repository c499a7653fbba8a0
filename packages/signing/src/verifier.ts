import type { HeadersLike } from "./headers.js";
import { utf8 } from "#crypto";

/** What a framework gate hands to a verifier: the exact received bytes, headers, and the URL. */
export interface WebhookRequest {
  /** The raw request body exactly as received. Never a parsed and re-serialised object. */
  body: Uint8Array;
  headers: HeadersLike;
  /** Absolute URL the sender requested; only schemes that sign the URL (Twilio) need it. */
  url?: string;
}

/** The outcome of a successful verification, common to every scheme. */
export interface VerifiedWebhook {
  /** Scheme that verified the request, e.g. `"standard-webhooks"` or `"github"`. */
  scheme: string;
  /** The sender's message/delivery id where the scheme sends one in a header (for dedup). */
  id: string | undefined;
  /** The signed timestamp where the scheme has one. */
  timestamp: Date | undefined;
  /** Index of the configured key or secret that matched (rotation tells you which one is live). */
  keyIndex: number;
}

/**
 * One way of verifying webhooks. `@postel/core`'s receiving gate accepts any `Verifier`: Standard
 * Webhooks (`createVerifier`) and every provider scheme (`stripe()`, `github()`, ...) implement it.
 * `verify` throws `WebhookVerificationError` when the request is not authentic.
 *
 * @example
 * const result = verifier.verify({ body, headers }, Date.now());
 */
export interface Verifier {
  readonly scheme: string;
  /**
   * Verifies synchronously, with node:crypto (Node, Deno, Bun). Where only Web Crypto exists it
   * throws `SYNC_CRYPTO_UNAVAILABLE`: use `verifyAsync`.
   */
  verify(request: WebhookRequest, now: number): VerifiedWebhook;
  /**
   * Verifies on every runtime (Web Crypto where node:crypto is absent), rejecting with the same
   * `WebhookVerificationError` codes as `verify`. Every verifier of this package has it; the gate
   * prefers it and falls back to `verify` for custom verifiers without it.
   *
   * @example
   * const result = await verifier.verifyAsync?.({ body, headers }, Date.now());
   */
  verifyAsync?(request: WebhookRequest, now: number): Promise<VerifiedWebhook>;
}

/** Signatures arrive as text or bytes; both are hashed as bytes, never re-encoded. */
export function toBytes(body: Uint8Array | string): Uint8Array {
  return typeof body === "string" ? utf8(body) : body;
}
