import { asyncPath, hmac, hmacSync, requireSyncCrypto, sha256Hex, sha256HexSync, utf8 } from "#crypto";
import { constantTimeEqual, findMatch } from "../constant-time.js";
import { InvalidArgumentError, WebhookVerificationError } from "../errors.js";
import { readHeader, requireHeader } from "../headers.js";
import { fromUtf8 } from "../internal/bytes.js";
import type { HmacHash, HmacKey } from "../internal/crypto.js";
import { providerDigest } from "../internal/hmac-verifier.js";
import { providerSecrets } from "../internal/provider-secrets.js";
import type { VerifiedWebhook, Verifier, WebhookRequest } from "../verifier.js";
import { signedUrls } from "./twilio-urls.js";

const HEADER = "x-twilio-signature";
const SETTINGS_HEADER = "x-twilio-webhooks-signature-settings";

type AuthTokens =
  | { authToken: string; authTokens?: never }
  | { authTokens: readonly string[]; authToken?: never };
type SharedKeySecrets =
  | { sharedKeySecret: string; sharedKeySecrets?: never }
  | { sharedKeySecrets: readonly string[]; sharedKeySecret?: never };

/**
 * Options of `twilio()`: the account's auth token(s), the secret(s) of the SharedKey a Webhooks Rule
 * signs with, or both; and optionally the public webhook URL.
 */
export type TwilioOptions = (
  | (AuthTokens & (SharedKeySecrets | { sharedKeySecret?: never; sharedKeySecrets?: never }))
  | ({ authToken?: never; authTokens?: never } & SharedKeySecrets)
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
 * Verifies Twilio webhooks as twilio-node's `validateRequest` does: `X-Twilio-Signature`, base64
 * HMAC of the full URL followed by the form parameters of an `application/x-www-form-urlencoded`
 * body, sorted by name, each as name+value. A URL carrying `bodySHA256` (JSON bodies) is signed
 * alone and the body's SHA-256 must equal that parameter. The URL is tried as received and as
 * `new URL()` encodes it, each without and with its port (see the README). Twilio signs with the
 * auth token (HMAC-SHA1), or, when a Webhooks Rule names a SharedKey, with that key's secret and the
 * algorithm (HMAC_SHA1 or HMAC_SHA256) named in `X-Twilio-Webhooks-Signature-Settings`; `keyIndex`
 * indexes the list that was used. `id` is the `I-Twilio-Idempotency-Token` header when present.
 *
 * @example
 * const verifier = twilio({ authToken: process.env.TWILIO_AUTH_TOKEN!, url: "https://example.com/sms" });
 */
export function twilio(options: TwilioOptions): Required<Verifier> {
  const hasSharedKeys = options.sharedKeySecret !== undefined || options.sharedKeySecrets !== undefined;
  const authTokens =
    options.authToken !== undefined || options.authTokens !== undefined || !hasSharedKeys
      ? providerSecrets("twilio", options, "authToken", "authTokens")
      : [];
  const sharedKeys = hasSharedKeys
    ? providerSecrets("twilio", options, "sharedKeySecret", "sharedKeySecrets")
    : [];
  const read = (request: WebhookRequest): SignedRequest => {
    const signature = utf8(requireHeader(request.headers, HEADER));
    const { keys, algorithm, what } = signingKeys(request, authTokens, sharedKeys);
    const url = requestUrl(options.url, request);
    const bodyHash = new URL(url).searchParams.get("bodySHA256");
    const params =
      bodyHash === null && isForm(request) ? formParams(request.body) : new Map<string, string[]>();
    const messages = signedUrls(url).map((candidate) => signedData(candidate, params));
    return { signature, keys, algorithm, what, messages, bodyHash };
  };
  const verify = (request: WebhookRequest): VerifiedWebhook => {
    requireSyncCrypto("twilio().verify()");
    const signed = read(request);
    const { keys, algorithm, messages, bodyHash } = signed;
    const digests = keys.flatMap((key) =>
      messages.map((data) => utf8(hmacSync(key, algorithm, "base64", [data]))),
    );
    return decide(signed, digests, bodyHash === null ? null : sha256HexSync(request.body), request);
  };
  return {
    scheme: "twilio",
    verify,
    verifyAsync: asyncPath(verify, async (request) => {
      const signed = read(request);
      const { keys, algorithm, messages, bodyHash } = signed;
      const [texts, bodyDigest] = await Promise.all([
        Promise.all(keys.flatMap((key) => messages.map((data) => hmac(key, algorithm, "base64", [data])))),
        bodyHash === null ? null : sha256Hex(request.body),
      ]);
      return decide(signed, texts.map(utf8), bodyDigest, request);
    }),
  };
}

/** What the request says was signed, and with which keys, read before any crypto runs. */
interface SignedRequest {
  signature: Uint8Array;
  keys: readonly HmacKey[];
  algorithm: HmacHash;
  what: string;
  /** The signed data for each URL form Twilio may have signed (see `signedUrls`). */
  messages: string[];
  /** The `bodySHA256` query parameter of a JSON body's URL, else null. */
  bodyHash: string | null;
}

/** `digests` holds one HMAC per key and URL form, key by key; `bodyDigest` the body's SHA-256 when the URL names one. */
function decide(
  signed: SignedRequest,
  digests: readonly Uint8Array[],
  bodyDigest: string | null,
  request: WebhookRequest,
): VerifiedWebhook {
  const { what, messages, bodyHash } = signed;
  const match = findMatch(digests, [signed.signature]);
  const bodyMatches = bodyHash === null || constantTimeEqual(bodyDigest ?? "", bodyHash);
  if (match === -1 || !bodyMatches) {
    throw new WebhookVerificationError(
      "SIGNATURE_INVALID",
      (match === -1
        ? `The x-twilio-signature header does not match the configured ${what} for this URL. `
        : "The body does not match the bodySHA256 query parameter. ") +
        `Check the ${what}, that the URL is exactly the one configured in Twilio (scheme, host, ` +
        "path and query), and that the body is the raw bytes received.",
      HEADER,
    );
  }
  return {
    scheme: "twilio",
    id: readHeader(request.headers, "i-twilio-idempotency-token"),
    timestamp: undefined,
    keyIndex: Math.floor(match / messages.length),
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
  return {
    [HEADER]: providerDigest("twilio.sign()", input.authToken, "sha1", "base64", [
      signedData(input.url, params),
    ]),
  };
};

/**
 * Which secrets and hash to check, as twilio-node's `webhook()` decides: without a signature-settings
 * header Twilio signed with the auth token and HMAC-SHA1; with one, with the SharedKey's secret and
 * the algorithm the header names (HMAC_SHA1 when it names none).
 */
function signingKeys(
  request: WebhookRequest,
  authTokens: readonly HmacKey[],
  sharedKeys: readonly HmacKey[],
): { keys: readonly HmacKey[]; algorithm: HmacHash; what: string } {
  const settings = readHeader(request.headers, SETTINGS_HEADER);
  if (!settings) {
    if (authTokens.length > 0) return { keys: authTokens, algorithm: "sha1", what: "auth token(s)" };
    throw new WebhookVerificationError(
      "SIGNATURE_INVALID",
      `Twilio signed this request with the account auth token (it has no ${SETTINGS_HEADER} header), ` +
        "but only SharedKey secrets are configured: pass twilio({ authToken }) too.",
      HEADER,
    );
  }
  const name = settingsAlgorithm(settings);
  const algorithm = name === "HMAC_SHA1" ? "sha1" : name === "HMAC_SHA256" ? "sha256" : undefined;
  if (algorithm === undefined) {
    throw new WebhookVerificationError(
      "SIGNATURE_INVALID",
      `The ${SETTINGS_HEADER} header names the signature algorithm ${JSON.stringify(name)}; supported ` +
        "are HMAC_SHA1 and HMAC_SHA256. Upgrade @postel/signing if Twilio added one.",
      SETTINGS_HEADER,
    );
  }
  if (sharedKeys.length > 0) return { keys: sharedKeys, algorithm, what: "SharedKey secret(s)" };
  throw new WebhookVerificationError(
    "SIGNATURE_INVALID",
    `Twilio signed this request with a SharedKey (the ${SETTINGS_HEADER} header is present), but no ` +
      "SharedKey secret is configured: pass twilio({ sharedKeySecret }) with the secret of the key " +
      "the Webhook Setting names.",
    HEADER,
  );
}

/** `key=<id>,algorithm=<name>`; a header without `algorithm=` means HMAC_SHA1. Case-insensitive. */
function settingsAlgorithm(settings: string): string {
  for (const part of settings.split(",")) {
    const separator = part.indexOf("=");
    if (separator === -1 || part.slice(0, separator).trim() !== "algorithm") continue;
    const value = part.slice(separator + 1).trim();
    if (value) return value.toUpperCase();
  }
  return "HMAC_SHA1";
}

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
  const scheme = url !== undefined && /^https?:\/\//i.test(url);
  if (scheme && configured === undefined && !URL.canParse(url)) {
    // Built by the framework from the request's own Host header: an unparseable one is the sender's
    // doing, not the receiver's configuration (a 401, not a 500), and no URL Twilio signed.
    throw new WebhookVerificationError(
      "SIGNATURE_INVALID",
      "The request's URL (built from its Host header) is not an absolute http(s) URL, so Twilio cannot " +
        "have signed it. If Twilio calls a URL your server does not see (a proxy), pass it as twilio({ url }).",
      HEADER,
    );
  }
  if (url === undefined || !scheme || !URL.canParse(url)) {
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
  for (const [key, value] of new URLSearchParams(fromUtf8(body))) {
    params.set(key, [...(params.get(key) ?? []), value]);
  }
  return params;
}
