/**
 * `@postel/signing/inbound`: the receiving gate. It keeps the exact received bytes, verifies them
 * against every configured secret, deduplicates by `webhook-id` and hands a typed event to the handler.
 * It needs nothing but this package: a receiver-only app installs an adapter and `@postel/signing`,
 * no HTTP client, worker or schema library. `@postel/core/inbound` re-exports all of it.
 */
export { expirySweeper, InMemoryDedupStore } from "./inbound/dedup.js";
export type { ClaimResult, DedupKey, DedupStore } from "./inbound/dedup.js";
export { D1_DEDUP_SCHEMA, D1DedupStore } from "./inbound/d1-dedup.js";
export type {
  D1DatabaseLike,
  D1DedupStoreOptions,
  D1ResultLike,
  D1StatementLike,
} from "./inbound/d1-dedup.js";
export { distinctHeaders } from "./inbound/distinct-headers.js";
export { bodyAlreadyParsed, INBOUND_STATUS, InboundError } from "./inbound/errors.js";
export type { InboundErrorCode } from "./inbound/errors.js";
export { payloadTooLarge, readBody } from "./inbound/read-body.js";
export { errorResponse, Receiver } from "./inbound/receiver.js";
export type {
  CatalogPayload,
  EventOf,
  GateResponse,
  InboundRequest,
  InboundSources,
  PayloadOf,
  VerifiedEvent,
  WebhookHandler,
} from "./inbound/receiver.js";
export type { OpenTelemetryApi, ReceiverTelemetry } from "./inbound/trace-gate.js";
export type { InboundSourceOptions, ReceivingCatalog, VerifierInput } from "./inbound/sources.js";
export type { StandardSchemaV1 } from "./inbound/standard-schema.js";
export type { Clock as InboundClock } from "./inbound/clock.js";
export { type Duration, formatDuration, parseDuration, toMs } from "./inbound/duration.js";
export {
  type ConfigurationIssue,
  ConfigurationError,
  InvalidInputError,
  isPostelError,
  PostelError,
  SyncCryptoUnavailableError,
} from "./errors.js";
export { handleRequest, readRequest } from "./inbound/fetch-gate.js";
export type { HandleRequestOptions, ReadRequestOptions } from "./inbound/fetch-gate.js";
export { handleNodeRequest, readNodeRequest } from "./inbound/node-gate.js";
export type {
  HandleNodeRequestOptions,
  NodeGateResponse,
  NodeRequestLike,
  ReadNodeRequestOptions,
} from "./inbound/node-gate.js";
export type { RequestRead } from "./inbound/gate-types.js";
