import { utf8 } from "#crypto";
import { findMatch } from "../constant-time.js";
import { WebhookVerificationError } from "../errors.js";
import { readHeader, requireHeader } from "../headers.js";
import { hmacVerifier, providerDigest } from "../internal/hmac-verifier.js";
import { providerSecrets } from "../internal/provider-secrets.js";
import type { Verifier } from "../verifier.js";

const HEADER = "x-shopify-hmac-sha256";

/** Options of `shopify()`: the app's client secret(s), or the shop's webhook signing key. */
export type ShopifyOptions =
  | { secret: string; secrets?: never }
  | { secrets: readonly string[]; secret?: never };

/**
 * Verifies Shopify webhooks: `X-Shopify-Hmac-Sha256: <base64>`, HMAC-SHA256 of the body. `id` is
 * `X-Shopify-Webhook-Id`; `timestamp` is `X-Shopify-Triggered-At` when present (informational:
 * Shopify signs no timestamp, so there is no replay window).
 *
 * @example
 * const verifier = shopify({ secret: process.env.SHOPIFY_CLIENT_SECRET! });
 */
export function shopify(options: ShopifyOptions): Required<Verifier> {
  return hmacVerifier({
    scheme: "shopify",
    keys: providerSecrets("shopify", options, "secret", "secrets"),
    hash: "sha256",
    encoding: "base64",
    read(request) {
      return { signature: utf8(requireHeader(request.headers, HEADER)), parts: [request.body] };
    },
    decide({ signature }, digests, request) {
      const keyIndex = findMatch(digests, [signature]);
      if (keyIndex === -1) {
        throw new WebhookVerificationError(
          "SIGNATURE_INVALID",
          "The x-shopify-hmac-sha256 header does not match the configured secret(s). Use the app's client " +
            "secret and pass the raw request body, not re-serialised JSON.",
          HEADER,
        );
      }
      return {
        scheme: "shopify",
        id: readHeader(request.headers, "x-shopify-webhook-id"),
        timestamp: triggeredAt(readHeader(request.headers, "x-shopify-triggered-at")),
        keyIndex,
      };
    },
  });
}

/**
 * Produces the `x-shopify-hmac-sha256` header Shopify would send, for tests.
 *
 * @example
 * const headers = shopify.sign({ secret: "shpss_...", body });
 */
shopify.sign = (input: { secret: string; body: Uint8Array | string }) => {
  return { [HEADER]: providerDigest("shopify.sign()", input.secret, "sha256", "base64", [input.body]) };
};

function triggeredAt(value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}
