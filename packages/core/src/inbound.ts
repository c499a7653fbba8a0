/**
 * `@postel/core/inbound`: the receiving side on its own. Loads no worker, HTTP client or database
 * driver, so a receiver-only app (an adapter plus this) stays small.
 */
export { InMemoryDedupStore } from "./inbound/dedup.js";
export type { ClaimResult, DedupKey, DedupStore } from "./inbound/dedup.js";
export { distinctHeaders } from "./inbound/distinct-headers.js";
export { bodyAlreadyParsed, INBOUND_STATUS, InboundError } from "./inbound/errors.js";
export type { InboundErrorCode } from "./inbound/errors.js";
export { payloadTooLarge, readBody } from "./inbound/read-body.js";
export { errorResponse, Receiver } from "./inbound/receiver.js";
export type {
  GateResponse,
  InboundRequest,
  InboundSources,
  PayloadOf,
  VerifiedEvent,
  WebhookHandler,
} from "./inbound/receiver.js";
export type { InboundSourceOptions, VerifierInput } from "./inbound/sources.js";
export type { StandardSchemaV1 } from "./inbound/standard-schema.js";
export { isPostelError, PostelError } from "./errors.js";
