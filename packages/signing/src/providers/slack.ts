import { findMatch } from "../constant-time.js";
import { WebhookVerificationError } from "../errors.js";
import { requireHeader } from "../headers.js";
import { hmacEach, providerSecrets } from "../internal/provider-secrets.js";
import { assertInWindow, parseTimestampSeconds, resolveTolerance, toTimestampSeconds } from "../timestamp.js";
import type { Verifier } from "../verifier.js";

const SIGNATURE = "x-slack-signature";
const TIMESTAMP = "x-slack-request-timestamp";

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
export function slack(options: SlackOptions): Verifier {
  const keys = providerSecrets("slack", options, "signingSecret", "signingSecrets");
  const tolerance = resolveTolerance(options.tolerance, 300_000);
  return {
    scheme: "slack",
    verify(request, now) {
      const signature = requireHeader(request.headers, SIGNATURE);
      const timestamp = requireHeader(request.headers, TIMESTAMP);
      const seconds = parseTimestampSeconds(timestamp, TIMESTAMP);
      assertInWindow(seconds, now, tolerance, TIMESTAMP);
      if (!signature.startsWith("v0=")) {
        throw new WebhookVerificationError(
          "MALFORMED_HEADER",
          'The x-slack-signature header must look like "v0=<hex>"; no other version exists.',
          SIGNATURE,
        );
      }
      const expected = hmacEach(keys, "sha256", "hex", [`v0:${timestamp}:`, request.body]).map((hex) =>
        Buffer.concat([Buffer.from("v0="), hex]),
      );
      const keyIndex = findMatch(expected, [Buffer.from(signature)]);
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
  };
}

/**
 * Produces the headers Slack would send, for tests.
 *
 * @example
 * const headers = slack.sign({ signingSecret, timestamp: new Date(), body: "token=..." });
 */
slack.sign = (input: { signingSecret: string; timestamp: Date | number; body: Uint8Array | string }) => {
  const seconds = toTimestampSeconds(input.timestamp);
  const [hex] = hmacEach([Buffer.from(input.signingSecret)], "sha256", "hex", [`v0:${seconds}:`, input.body]);
  return { [SIGNATURE]: "v0=" + hex!.toString(), [TIMESTAMP]: String(seconds) };
};
