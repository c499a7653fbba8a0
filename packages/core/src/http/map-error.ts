import type { HttpErrorCode } from "../classify-response.js";

/** A failed request reduced to a stable code and a short human message. */
export interface MappedHttpError {
  code: HttpErrorCode;
  message: string;
}

const BY_CODE: Readonly<Record<string, HttpErrorCode>> = {
  UND_ERR_CONNECT_TIMEOUT: "CONNECT_TIMEOUT",
  ETIMEDOUT: "CONNECT_TIMEOUT",
  ECONNREFUSED: "CONNECTION_REFUSED",
  ECONNRESET: "CONNECTION_RESET",
  EPIPE: "CONNECTION_RESET",
  UND_ERR_SOCKET: "CONNECTION_RESET",
  UND_ERR_CLOSED: "CONNECTION_RESET",
  ENOTFOUND: "DNS_FAILURE",
  EAI_AGAIN: "DNS_FAILURE",
  EAI_NONAME: "DNS_FAILURE",
  EAI_FAIL: "DNS_FAILURE",
  EAI_NODATA: "DNS_FAILURE",
  UND_ERR_HEADERS_TIMEOUT: "TIMEOUT",
  UND_ERR_BODY_TIMEOUT: "TIMEOUT",
  DEPTH_ZERO_SELF_SIGNED_CERT: "TLS_ERROR",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "TLS_ERROR",
  SELF_SIGNED_CERT_IN_CHAIN: "TLS_ERROR",
  HOSTNAME_MISMATCH: "TLS_ERROR",
  PRIVATE_ADDRESS_NOT_ALLOWED: "PRIVATE_ADDRESS",
};

const TLS_PREFIXES = ["ERR_TLS_", "ERR_SSL_", "CERT_", "UNABLE_TO_"];

const SUMMARY: Readonly<Record<HttpErrorCode, string>> = {
  TIMEOUT: "The receiver did not send a complete response within the timeout",
  CONNECT_TIMEOUT: "Could not connect to the receiver within the connect timeout",
  CONNECTION_REFUSED: "The receiver refused the connection",
  CONNECTION_RESET: "The connection closed before a complete response arrived",
  DNS_FAILURE: "The receiver's hostname could not be resolved",
  TLS_ERROR: "The TLS handshake with the receiver failed",
  PRIVATE_ADDRESS: "Refused by the network policy",
  RESPONSE_TOO_LARGE: "The response was too large",
  NETWORK_ERROR: "The request failed",
};

/**
 * Maps whatever undici, `net`, `tls` or `dns` threw to an `HttpErrorCode`, walking `.cause` chains and
 * the `errors` of an `AggregateError` (Node's happy-eyeballs connect). Unknown errors are `NETWORK_ERROR`.
 * @example mapHttpError(Object.assign(new Error("x"), { code: "ECONNREFUSED" })).code // "CONNECTION_REFUSED"
 */
export function mapHttpError(error: unknown): MappedHttpError {
  for (const candidate of errorChain(error)) {
    const code = codeOf(candidate);
    if (code === undefined) continue;
    // The policy's own message already says which address was refused and how to allow it.
    if (code === "PRIVATE_ADDRESS") return { code, message: detailOf(candidate) };
    return { code, message: `${SUMMARY[code]} (${detailOf(candidate)}).` };
  }
  return { code: "NETWORK_ERROR", message: `${SUMMARY.NETWORK_ERROR} (${detailOf(error)}).` };
}

function detailOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  // Node's happy-eyeballs AggregateError has an empty message; its code is the useful part.
  const message = error.message.trim().replace(/\.$/, "");
  return message || (typeof code === "string" ? code : error.name);
}

function codeOf(error: unknown): HttpErrorCode | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  // AbortSignal.timeout() aborts with a DOMException named TimeoutError.
  if ((error as { name?: unknown }).name === "TimeoutError") return "TIMEOUT";
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string") return undefined;
  const known = BY_CODE[code];
  if (known !== undefined) return known;
  return TLS_PREFIXES.some((prefix) => code.startsWith(prefix)) ? "TLS_ERROR" : undefined;
}

/** The error, then its causes and aggregated errors, breadth-first, each visited once. */
function* errorChain(error: unknown): Generator<unknown> {
  const queue: unknown[] = [error];
  const seen = new Set<unknown>();
  while (queue.length > 0) {
    const next = queue.shift();
    if (next === undefined || next === null || seen.has(next)) continue;
    seen.add(next);
    yield next;
    if (typeof next !== "object") continue;
    const { cause, errors } = next as { cause?: unknown; errors?: unknown };
    queue.push(cause);
    if (Array.isArray(errors)) queue.push(...errors);
  }
}
