import { utf8 } from "#crypto";
import { findMatch } from "../constant-time.js";
import { WebhookVerificationError } from "../errors.js";
import { requireHeader } from "../headers.js";
import { hmacVerifier, providerDigest } from "../internal/hmac-verifier.js";
import { providerSecrets } from "../internal/provider-secrets.js";
import { assertInWindow, parseTimestampSeconds, resolveTolerance, toTimestampSeconds } from "../timestamp.js";
import type { Verifier } from "../verifier.js";

const HEADER = "stripe-signature";

/** Options of `stripe()`: the endpoint's signing secret(s) as shown in the Stripe dashboard. */
export type StripeOptions = (
  | { secret: string; secrets?: never }
  | { secrets: readonly string[]; secret?: never }
) & {
  /** Accepted clock skew either side, in milliseconds. Default 300 000 (Stripe's 300 s). */
  tolerance?: number;
};

/**
 * Verifies Stripe webhooks: `Stripe-Signature: t=<seconds>,v1=<hex>[,v1=<hex>...]`, HMAC-SHA256 over
 * `t + "." + body` keyed with the literal `whsec_...` string (Stripe does not base64-decode it).
 * Stripe's event id lives in the JSON body, so `id` is undefined.
 *
 * @example
 * const verifier = stripe({ secret: process.env.STRIPE_WEBHOOK_SECRET! });
 */
export function stripe(options: StripeOptions): Required<Verifier> {
  const keys = providerSecrets("stripe", options, "secret", "secrets");
  const tolerance = resolveTolerance(options.tolerance, 300_000);
  return hmacVerifier({
    scheme: "stripe",
    keys,
    hash: "sha256",
    encoding: "hex",
    read(request, now) {
      const { timestamp, signatures } = parseStripeHeader(requireHeader(request.headers, HEADER));
      const seconds = parseTimestampSeconds(timestamp, HEADER);
      assertInWindow(seconds, now, tolerance, HEADER);
      return { seconds, signatures, parts: [`${timestamp}.`, request.body] };
    },
    decide({ seconds, signatures }, digests) {
      const keyIndex = findMatch(digests, signatures);
      if (keyIndex === -1) {
        throw new WebhookVerificationError(
          "SIGNATURE_INVALID",
          "No v1 signature in the stripe-signature header matched the configured secret(s). Use the endpoint's " +
            "signing secret (whsec_..., not the API key) and pass the raw request body, not re-serialised JSON.",
          HEADER,
        );
      }
      return { scheme: "stripe", id: undefined, timestamp: new Date(seconds * 1000), keyIndex };
    },
  });
}

/**
 * Produces a `stripe-signature` header as Stripe would, for tests of your own Stripe endpoint.
 *
 * @example
 * const headers = stripe.sign({ secret: "whsec_test", timestamp: new Date(), body });
 */
stripe.sign = (input: { secret: string; timestamp: Date | number; body: Uint8Array | string }) => {
  const seconds = toTimestampSeconds(input.timestamp);
  const signature = providerDigest("stripe.sign()", input.secret, "sha256", "hex", [
    `${seconds}.`,
    input.body,
  ]);
  return { [HEADER]: `t=${seconds},v1=${signature}` };
};

function parseStripeHeader(header: string): { timestamp: string; signatures: Uint8Array[] } {
  let timestamp: string | undefined;
  const signatures: Uint8Array[] = [];
  for (const item of header.split(",")) {
    const equals = item.indexOf("=");
    const key = item.slice(0, equals).trim();
    const value = item.slice(equals + 1).trim();
    if (equals === -1) continue;
    if (key === "t") timestamp = value;
    // v0 and any other scheme are ignored, as Stripe's own libraries do.
    else if (key === "v1") signatures.push(utf8(value));
  }
  if (timestamp === undefined || signatures.length === 0) {
    throw new WebhookVerificationError(
      "MALFORMED_HEADER",
      `The stripe-signature header has no ${timestamp === undefined ? "t=<timestamp>" : "v1=<signature>"} ` +
        'element; expected "t=<seconds>,v1=<hex>".',
      HEADER,
    );
  }
  return { timestamp, signatures };
}
