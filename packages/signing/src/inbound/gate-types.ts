import type { HeadersLike } from "../headers.js";

/** What a framework gate hands over: the exact received bytes, the headers, and the full URL. */
export interface InboundRequest {
  body: Uint8Array;
  headers: HeadersLike;
  url?: string;
}

/** A verified, parsed (and, with a schema, validated) webhook. */
export interface VerifiedEvent<TPayload = unknown> {
  source: string;
  /** The sender's message id (`webhook-id`), when the scheme has one. */
  id: string | undefined;
  timestamp: Date | undefined;
  /** Which scheme verified it, which configured verifier (index) and which of its keys. */
  scheme: string;
  verifierIndex: number;
  keyIndex: number;
  /** The parsed body. */
  payload: TPayload;
  /** The exact bytes received. */
  body: Uint8Array;
}

/** The HTTP answer the gate decided; adapters write it out as is. */
export interface GateResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** What the handler threw, for the framework's own error logging. */
  error?: unknown;
}

/** Handles one verified webhook. Throwing releases the dedup record so the sender's retry is processed. */
export type WebhookHandler<TPayload = unknown> = (event: VerifiedEvent<TPayload>) => unknown;

/**
 * What reading a request for the gate gives: the `InboundRequest` to hand `receiver.handle()`, or the
 * answer that refuses it (unknown source, body too large or already parsed). `aborted` is set when
 * the client went away mid-body: nobody is left to read the answer, and nothing needs logging.
 */
export type RequestRead =
  | { request: InboundRequest; response?: undefined; aborted?: undefined }
  | { request?: undefined; response: GateResponse; aborted: boolean };
