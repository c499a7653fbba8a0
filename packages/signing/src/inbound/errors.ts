import { PostelError } from "../errors.js";

/** Codes the receiving gate answers with, and the HTTP status each maps to. */
export const INBOUND_STATUS = {
  MISSING_HEADER: 400,
  MALFORMED_HEADER: 400,
  TIMESTAMP_OUT_OF_WINDOW: 401,
  SIGNATURE_INVALID: 401,
  UNKNOWN_KEY_ID: 401,
  PAYLOAD_TOO_LARGE: 413,
  PAYLOAD_INVALID: 422,
  UNKNOWN_EVENT_TYPE: 422,
  DUPLICATE_IN_FLIGHT: 429,
  HANDLER_FAILED: 500,
  BODY_ALREADY_PARSED: 500,
  DEDUP_UNAVAILABLE: 503,
  UNKNOWN_SOURCE: 500,
  RECEIVER_MISCONFIGURED: 500,
} as const;

/** A code of the receiving gate. */
export type InboundErrorCode = keyof typeof INBOUND_STATUS;

/**
 * A webhook the gate refused (or could not process). `status` is the HTTP status to answer with;
 * the message is safe to send back: it never contains secrets or signatures.
 */
export class InboundError extends PostelError {
  declare readonly code: InboundErrorCode;
  readonly status: number;

  constructor(code: InboundErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.status = INBOUND_STATUS[code];
  }
}

/**
 * The error framework adapters throw when the framework parsed the body before the gate saw it:
 * the exact bytes are gone, so verification would fail for a misleading reason.
 */
export function bodyAlreadyParsed(fix: string): InboundError {
  return new InboundError(
    "BODY_ALREADY_PARSED",
    `The request body was already parsed by the framework, so the exact bytes the sender signed are gone. ${fix}`,
  );
}
