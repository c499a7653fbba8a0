import { utf8 } from "#crypto";
import { findMatch } from "../constant-time.js";
import { WebhookVerificationError } from "../errors.js";
import { readHeader, requireHeader } from "../headers.js";
import { hmacVerifier, providerDigest } from "../internal/hmac-verifier.js";
import { providerSecrets } from "../internal/provider-secrets.js";
import type { Verifier } from "../verifier.js";

const HEADER = "x-hub-signature-256";
const PREFIX = "sha256=";

/** Options of `github()`: the webhook secret(s) configured on the repository, org or app. */
export type GitHubOptions =
  | { secret: string; secrets?: never }
  | { secrets: readonly string[]; secret?: never };

/**
 * Verifies GitHub webhooks: `X-Hub-Signature-256: sha256=<hex>`, HMAC-SHA256 of the body. GitHub
 * signs no timestamp, so there is no replay window; deduplicate on `id` (`X-GitHub-Delivery`).
 * The legacy SHA-1 `X-Hub-Signature` header is deliberately not accepted.
 *
 * @example
 * const verifier = github({ secret: process.env.GITHUB_WEBHOOK_SECRET! });
 */
export function github(options: GitHubOptions): Required<Verifier> {
  return hmacVerifier({
    scheme: "github",
    keys: providerSecrets("github", options, "secret", "secrets"),
    hash: "sha256",
    encoding: "hex",
    read(request) {
      const signature = requireHeader(request.headers, HEADER);
      if (!signature.startsWith(PREFIX)) {
        throw new WebhookVerificationError(
          "MALFORMED_HEADER",
          'The x-hub-signature-256 header must look like "sha256=<hex>".',
          HEADER,
        );
      }
      // The prefix was just checked, so comparing what follows it compares the whole header.
      return { hex: utf8(signature.slice(PREFIX.length)), parts: [request.body] };
    },
    decide({ hex }, digests, request) {
      const keyIndex = findMatch(digests, [hex]);
      if (keyIndex === -1) {
        throw new WebhookVerificationError(
          "SIGNATURE_INVALID",
          "The x-hub-signature-256 header does not match the configured secret(s). Check the webhook secret " +
            "and pass the raw request body, not re-serialised JSON.",
          HEADER,
        );
      }
      return {
        scheme: "github",
        id: readHeader(request.headers, "x-github-delivery"),
        timestamp: undefined,
        keyIndex,
      };
    },
  });
}

/**
 * Produces the `x-hub-signature-256` header GitHub would send, for tests.
 *
 * @example
 * const headers = github.sign({ secret: "It's a Secret to Everybody", body: "Hello, World!" });
 */
github.sign = (input: { secret: string; body: Uint8Array | string }) => {
  return { [HEADER]: PREFIX + providerDigest("github.sign()", input.secret, "sha256", "hex", [input.body]) };
};
