/**
 * The brand is a registered symbol rather than a module-local one so that `isPostelError()` still
 * recognises errors thrown by a second copy of the package (duplicate installs, bundled adapters),
 * where `instanceof` would silently answer false.
 */
const POSTEL_ERROR = Symbol.for("postel.error");

/**
 * Base class of every error Postel throws: a stable SCREAMING_SNAKE `code` to branch on, and a
 * message that says what was wrong and how to fix it (never a secret, a key or signature bytes).
 *
 * @example
 * try { verifier.verify(request, Date.now()); }
 * catch (error) { if (isPostelError(error)) log.warn(error.code); else throw error; }
 */
export class PostelError extends Error {
  /** Stable machine-readable code, e.g. `SIGNATURE_INVALID`. */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PostelError";
    this.code = code;
    Object.defineProperty(this, POSTEL_ERROR, { value: true });
  }
}

/**
 * True when `value` is a `PostelError` from any copy of any `@postel/*` package.
 *
 * @example
 * if (isPostelError(error) && error.code === "SIGNATURE_INVALID") return new Response(null, { status: 401 });
 */
export function isPostelError(value: unknown): value is PostelError {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { [POSTEL_ERROR]?: unknown })[POSTEL_ERROR] === true &&
    typeof (value as { code?: unknown }).code === "string"
  );
}

/** Why a webhook request was rejected. */
export type WebhookVerificationErrorCode =
  | "MISSING_HEADER"
  | "MALFORMED_HEADER"
  | "TIMESTAMP_OUT_OF_WINDOW"
  | "SIGNATURE_INVALID";

/**
 * A received webhook failed verification. `header` names the header at fault when there is one,
 * so a gate can answer 400 for malformed input and 401 for a bad signature.
 *
 * @example
 * if (error instanceof WebhookVerificationError && error.code === "TIMESTAMP_OUT_OF_WINDOW") { ... }
 */
export class WebhookVerificationError extends PostelError {
  declare readonly code: WebhookVerificationErrorCode;
  /** Lower-case name of the offending header, when a single header is at fault. */
  readonly header: string | undefined;

  constructor(code: WebhookVerificationErrorCode, message: string, header?: string) {
    super(code, message);
    this.name = "WebhookVerificationError";
    this.header = header;
  }
}

/**
 * A secret or key could not be used: wrong prefix, not base64, wrong length, or an Ed25519 key pair
 * whose halves do not belong together. Thrown when keys are decoded, never per request.
 */
export class InvalidKeyError extends PostelError {
  declare readonly code: "INVALID_KEY";

  constructor(message: string) {
    super("INVALID_KEY", message);
    this.name = "InvalidKeyError";
  }
}

/**
 * Thrown for an argument that would make signing or verification unsafe or meaningless (a negative
 * tolerance, a timestamp in milliseconds, an empty message id).
 */
export class InvalidArgumentError extends PostelError {
  declare readonly code: "INVALID_ARGUMENT";

  constructor(message: string) {
    super("INVALID_ARGUMENT", message);
    this.name = "InvalidArgumentError";
  }
}

/**
 * A synchronous signing or verification API was called where only Web Crypto exists (Cloudflare
 * Workers, Vercel Edge, browsers): Web Crypto is asynchronous, so use `verifyAsync()` (the receiving
 * gate already does). Thrown before the request is read, never for a bad signature.
 *
 * @example
 * if (isPostelError(error) && error.code === "SYNC_CRYPTO_UNAVAILABLE") return verifier.verifyAsync!(request, now);
 */
export class SyncCryptoUnavailableError extends PostelError {
  declare readonly code: "SYNC_CRYPTO_UNAVAILABLE";

  constructor(api: string) {
    super(
      "SYNC_CRYPTO_UNAVAILABLE",
      `${api} needs synchronous crypto, but this runtime has only Web Crypto, which is asynchronous ` +
        '(node:crypto is loaded only under the "node" export condition). Verify with verifyAsync() ' +
        "instead (the receiving gate of @postel/signing/inbound already does); signing and key " +
        "generation need Node, Deno or Bun.",
    );
    this.name = "SyncCryptoUnavailableError";
  }
}

/** One invalid option: where it is (`outbound.retryPolicy.maxAttempts`) and how to fix it. */
export interface ConfigurationIssue {
  path: string;
  message: string;
  /** A stable code for issues a program may act on, e.g. `INVALID_ENCRYPTION_KEY`; absent for most. */
  code?: string;
}

/** `Postel()`, `Receiver()` or a storage constructor was given invalid options. Lists every bad field at once. */
export class ConfigurationError extends PostelError {
  readonly issues: readonly ConfigurationIssue[];

  constructor(issues: readonly ConfigurationIssue[], context = "Postel options") {
    const lines = issues.map((issue) => `  - ${issue.path || "(root)"}: ${issue.message}`);
    super("INVALID_CONFIGURATION", `Invalid ${context}:\n${lines.join("\n")}`);
    this.issues = issues;
  }
}

/**
 * Input to a call (`send`, `endpoints.create`, `replay`, ...) was rejected before anything was written.
 * Codes: `INVALID_EVENT_TYPE`, `PAYLOAD_NOT_SERIALIZABLE`, `PAYLOAD_TOO_LARGE`, `INVALID_URL`,
 * `PRIVATE_ADDRESS_NOT_ALLOWED`, `INVALID_DURATION`, `INVALID_ARGUMENT`, ...
 */
export class InvalidInputError extends PostelError {}
