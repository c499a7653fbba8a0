import { utf8 } from "#crypto";
import { findMatch } from "../constant-time.js";
import { WebhookVerificationError } from "../errors.js";
import { requireHeader } from "../headers.js";
import { hmacVerifier, providerDigest } from "../internal/hmac-verifier.js";
import { providerSecrets } from "../internal/provider-secrets.js";
import { assertInWindow, parseTimestampSeconds, resolveTolerance, toTimestampSeconds } from "../timestamp.js";
import type { Verifier } from "../verifier.js";

const SIGNATURE = "x-slack-signature";
const TIMESTAMP = "x-slack-request-timestamp";
const VERSION = "v0=";

/** Options of `slack()`: the app's signing secret(s) from "Basic Information". */
export type SlackOptions = (
  | { signingSecret: string; signingSecrets?: never }
  | { signingSecrets: readonly string[]; signingSecret?: never }
) & {
  /** Accepted clock skew either side, in milliseconds. Default 300 000 (Slack's 5 minutes). */
  tolerance?: number;
};

/**
 * Verifies Slack requests: `X-Slack-Signature: v0=<hex>`, HMAC-SHA256 over
 * `"v0:" + X-Slack-Request-Timestamp + ":" + body`, with a 5-minute replay window.
 *
 * @example
 * const verifier = slack({ signingSecret: process.env.SLACK_SIGNING_SECRET! });
 */
export function slack(options: SlackOptions): Required<Verifier> {
  const keys = providerSecrets("slack", options, "signingSecret", "signingSecrets");
  const tolerance = resolveTolerance(options.tolerance, 300_000);
  return hmacVerifier({
    scheme: "slack",
    keys,
    hash: "sha256",
    encoding: "hex",
    read(request, now) {
      const signature = requireHeader(request.headers, SIGNATURE);
      const timestamp = requireHeader(request.headers, TIMESTAMP);
      const seconds = parseTimestampSeconds(timestamp, TIMESTAMP);
      assertInWindow(seconds, now, tolerance, TIMESTAMP);
      if (!signature.startsWith(VERSION)) {
        throw new WebhookVerificationError(
          "MALFORMED_HEADER",
          'The x-slack-signature header must look like "v0=<hex>"; no other version exists.',
          SIGNATURE,
        );
      }
      // The version was just checked, so comparing what follows it compares the whole header.
      const hex = utf8(signature.slice(VERSION.length));
      return { seconds, hex, parts: [`v0:${timestamp}:`, request.body] };
    },
    decide({ seconds, hex }, digests) {
      const keyIndex = findMatch(digests, [hex]);
      if (keyIndex === -1) {
        throw new WebhookVerificationError(
          "SIGNATURE_INVALID",
          "The x-slack-signature header does not match the configured signing secret(s). Use the app's " +
            "signing secret (not the verification token) and pass the raw request body.",
          SIGNATURE,
        );
      }
      return { scheme: "slack", id: undefined, timestamp: new Date(seconds * 1000), keyIndex };
    },
  });
}

/**
 * Produces the headers Slack would send, for tests.
 *
 * @example
 * const headers = slack.sign({ signingSecret, timestamp: new Date(), body: "token=..." });
 */
slack.sign = (input: { signingSecret: string; timestamp: Date | number; body: Uint8Array | string }) => {
  const seconds = toTimestampSeconds(input.timestamp);
  const hex = providerDigest("slack.sign()", input.signingSecret, "sha256", "hex", [
    `v0:${seconds}:`,
    input.body,
  ]);
  return { [SIGNATURE]: VERSION + hex, [TIMESTAMP]: String(seconds) };
};
