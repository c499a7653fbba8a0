import { createHash } from "node:crypto";
import { constantTimeEqual, findMatch } from "../constant-time.js";
import { InvalidArgumentError, WebhookVerificationError } from "../errors.js";
import { readHeader, requireHeader } from "../headers.js";
import { hmacEach, providerSecrets } from "../internal/provider-secrets.js";
import type { Verifier, WebhookRequest } from "../verifier.js";

const HEADER = "x-twilio-signature";

/** Options of `twilio()`: the account's auth token(s), and optionally the public webhook URL. */
export type TwilioOptions = (
  | { authToken: string; authTokens?: never }
  | { authTokens: readonly string[]; authToken?: never }
) & {
  /**
   * The exact URL configured in Twilio (with query string), or a function computing it per request.
   * Needed behind proxies, where the URL the server sees is not the one Twilio signed. When unset,
   * `request.url` is used.
   */
  url?: string | ((request: WebhookRequest) => string);
};

/** POST parameters, as Twilio signs them (a repeated key carries several values). */
export type TwilioParams = Readonly<Record<string, string | readonly string[]>>;

/**
 * Verifies Twilio webhooks: `X-Twilio-Signature`, base64 HMAC-SHA1 of the full URL followed by the
 * form parameters of an `application/x-www-form-urlencoded` body, sorted by name, each as
 * name+value. A URL carrying `bodySHA256` (JSON bodies) is signed alone and the body's SHA-256 must
 * equal that parameter. The URL is tried as given, without its port and with the default port,
 * as Twilio's own library does. `id` is the `I-Twilio-Idempotency-Token` header when present.
 *
 * @example
 * const verifier = twilio({ authToken: process.env.TWILIO_AUTH_TOKEN!, url: "https://example.com/sms" });
 */
export function twilio(options: TwilioOptions): Verifier {
  const keys = providerSecrets("twilio", options, "authToken", "authTokens");
  return {
    scheme: "twilio",
    verify(request) {
      const signature = Buffer.from(requireHeader(request.headers, HEADER));
      const url = requestUrl(options.url, request);
      const bodyHash = new URL(url).searchParams.get("bodySHA256");
      const params =
        bodyHash === null && isForm(request) ? formParams(request.body) : new Map<string, string[]>();
      const urls = [...new Set([url, withoutPort(url), withDefaultPort(url)])];
      const expected = keys.flatMap((key) =>
        urls.map((candidate) => hmacEach([key], "sha1", "base64", [signedData(candidate, params)])[0]!),
      );
      const match = findMatch(expected, [signature]);
      const bodyMatches =
        bodyHash === null ||
        constantTimeEqual(createHash("sha256").update(request.body).digest("hex"), bodyHash);
      if (match === -1 || !bodyMatches) {
        throw new WebhookVerificationError(
          "SIGNATURE_INVALID",
          (match === -1
            ? "The x-twilio-signature header does not match the configured auth token(s) for this URL. "
            : "The body does not match the bodySHA256 query parameter. ") +
            "Check the auth token, that the URL is exactly the one configured in Twilio (scheme, host, " +
            "path and query), and that the body is the raw bytes received.",
          HEADER,
        );
      }
      return {
        scheme: "twilio",
        id: readHeader(request.headers, "i-twilio-idempotency-token"),
        timestamp: undefined,
        keyIndex: Math.floor(match / urls.length),
      };
    },
  };
}

/**
 * Produces the `x-twilio-signature` header Twilio would send for `url` and form `params`, for tests.
 *
 * @example
 * const headers = twilio.sign({ authToken, url: "https://example.com/sms", params: { Body: "hi" } });
 */
twilio.sign = (input: { authToken: string; url: string; params?: TwilioParams }) => {
  const params = new Map(Object.entries(input.params ?? {}).map(([key, value]) => [key, [value].flat()]));
  const [signature] = hmacEach([Buffer.from(input.authToken)], "sha1", "base64", [
    signedData(input.url, params),
  ]);
  return { [HEADER]: signature!.toString() };
};

function signedData(url: string, params: ReadonlyMap<string, readonly string[]>): string {
  let data = url;
  for (const key of [...params.keys()].sort()) {
    // Twilio's reference library signs each distinct value once, in sorted order.
    for (const value of [...new Set(params.get(key))].sort()) data += key + value;
  }
  return data;
}

function requestUrl(configured: TwilioOptions["url"], request: WebhookRequest): string {
  const url = typeof configured === "function" ? configured(request) : (configured ?? request.url);
  if (url === undefined || !/^https?:\/\//i.test(url) || !URL.canParse(url)) {
    throw new InvalidArgumentError(
      "twilio() signs the full request URL: pass the absolute URL configured in Twilio as twilio({ url }) " +
        "or as request.url (https://host/path?query, not just the path).",
    );
  }
  return url;
}

function isForm(request: WebhookRequest): boolean {
  const type = readHeader(request.headers, "content-type") ?? "";
  return type.toLowerCase().split(";")[0]!.trim() === "application/x-www-form-urlencoded";
}

function formParams(body: Uint8Array): Map<string, string[]> {
  const params = new Map<string, string[]>();
  for (const [key, value] of new URLSearchParams(Buffer.from(body).toString("utf8"))) {
    params.set(key, [...(params.get(key) ?? []), value]);
  }
  return params;
}

// Split without `new URL()`, which would re-encode the path and break the string Twilio signed.
const URL_PARTS = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#@]*@)?(\[[^\]]*\]|[^/?#:]*)(:\d*)?(.*)$/is;

function withoutPort(url: string): string {
  const parts = URL_PARTS.exec(url);
  return parts ? parts[1]! + (parts[2] ?? "") + parts[3]! + parts[5]! : url;
}

function withDefaultPort(url: string): string {
  const parts = URL_PARTS.exec(url);
  if (!parts || parts[4] !== undefined) return url;
  const port = parts[1]!.toLowerCase() === "https://" ? ":443" : ":80";
  return parts[1]! + (parts[2] ?? "") + parts[3]! + port + parts[5]!;
}
