/**
 * `@postel/core/inbound`: the receiving side on its own, as `@postel/signing/inbound` (where it lives,
 * so a receiver-only app need not install core and its HTTP client). Loads no worker, HTTP client or
 * database driver.
 */
export {
  bodyAlreadyParsed,
  distinctHeaders,
  errorResponse,
  expirySweeper,
  INBOUND_STATUS,
  InboundError,
  InMemoryDedupStore,
  isPostelError,
  PostelError,
  payloadTooLarge,
  Receiver,
  readBody,
} from "@postel/signing/inbound";
export type {
  CatalogPayload,
  ClaimResult,
  DedupKey,
  DedupStore,
  EventOf,
  GateResponse,
  InboundErrorCode,
  InboundRequest,
  InboundSourceOptions,
  InboundSources,
  PayloadOf,
  ReceivingCatalog,
  StandardSchemaV1,
  VerifiedEvent,
  VerifierInput,
  WebhookHandler,
} from "@postel/signing/inbound";
