import { syncCrypto } from "#crypto";
import { isPostelError, WebhookVerificationError } from "../errors.js";
import type { VerifiedWebhook, Verifier } from "../verifier.js";
import { type Clock, systemClock } from "./clock.js";
import type { ClaimResult } from "./dedup.js";
import { InboundError } from "./errors.js";
import type { GateResponse, InboundRequest, VerifiedEvent, WebhookHandler } from "./gate-types.js";
import { payloadTooLarge } from "./read-body.js";
import {
  type InboundSource,
  type InboundSourceOptions,
  parseInboundSources,
  type ReceivingCatalog,
} from "./sources.js";
import type { InferOutput } from "./standard-schema.js";
import { type ReceiverTelemetry, traceGate } from "./trace-gate.js";

export type { GateResponse, InboundRequest, VerifiedEvent, WebhookHandler } from "./gate-types.js";

/** The named sources a receiver was built with. */
export type InboundSources = Record<string, InboundSourceOptions<unknown>>;
type Sources = InboundSources;
/** The body of a catalog event of type `T`: what a Postel sender POSTs (Standard Webhooks). */
export interface CatalogPayload<T extends string = string, Data = unknown> {
  type: T;
  /** When the event was sent (ISO 8601), the same on every retry. */
  timestamp: string;
  data: Data;
}

type CatalogDefinitions<S, K extends keyof S> = S[K] extends { events: { definitions: infer D } } ? D : never;
type DataOf<D, T extends keyof D> = D[T] extends { schema: infer Schema } ? InferOutput<Schema> : unknown;

/**
 * The payload type of source `K`: with `events`, a union of its declared types' bodies (`type`
 * narrows `data`); else its schema's output, or `unknown` without a schema.
 */
export type PayloadOf<S extends InboundSources, K extends keyof S> = [CatalogDefinitions<S, K>] extends [
  never,
]
  ? S[K] extends { schema: infer Schema }
    ? InferOutput<Schema>
    : unknown
  : {
      [T in keyof CatalogDefinitions<S, K> & string]: CatalogPayload<T, DataOf<CatalogDefinitions<S, K>, T>>;
    }[keyof CatalogDefinitions<S, K> & string];

/**
 * The event the handler of source `K` gets. With `events`, a discriminated union: `event.type`
 * narrows `event.data` (also in `event.payload`).
 * @example
 * webhook(receiver, "shop", (event) => {
 *   if (event.type === "order.created") charge(event.data.total); // data typed by its schema
 * });
 */
export type EventOf<S extends InboundSources, K extends keyof S> = [CatalogDefinitions<S, K>] extends [never]
  ? VerifiedEvent<PayloadOf<S, K>>
  : {
      [T in keyof CatalogDefinitions<S, K> & string]: VerifiedEvent<
        CatalogPayload<T, DataOf<CatalogDefinitions<S, K>, T>>
      > & { type: T; data: DataOf<CatalogDefinitions<S, K>, T> };
    }[keyof CatalogDefinitions<S, K> & string];

/** The receiving side: verify and handle webhooks for named sources. Framework adapters wrap it. */
export interface Receiver<S extends Sources = Sources> {
  /** Source names, for adapters' error messages. */
  readonly sources: readonly string[];
  /** Largest body a source accepts; adapters stop reading past it. */
  maxBodyBytes(source: keyof S & string): number;
  /** Verifies, parses and validates; throws `InboundError` (with its HTTP `status`) otherwise. Does not deduplicate. */
  verify<K extends keyof S & string>(source: K, request: InboundRequest): Promise<EventOf<S, K>>;
  /** The whole gate: verify → dedup → handler, answered as an HTTP response. Never throws. */
  handle<K extends keyof S & string>(
    source: K,
    request: InboundRequest,
    handler: (event: EventOf<S, K>) => unknown,
  ): Promise<GateResponse>;
}

/**
 * Builds a receiver from named sources. A receiver-only app needs nothing else: no storage, no worker.
 * `clock` (default: the system clock) is what the timestamp tolerance and dedup expiry are judged on.
 * `telemetry` traces every request of `handle()` (see `ReceiverTelemetry`); without it nothing of
 * OpenTelemetry is loaded.
 * @example
 * const receiver = Receiver({ sources: { billing: { verify: process.env.BILLING_WEBHOOK_SECRET! } } });
 */
export function Receiver<S extends Sources>(options: {
  sources: S;
  clock?: Clock;
  telemetry?: ReceiverTelemetry | undefined;
}): Receiver<S> {
  const sources = parseInboundSources(options.sources);
  const clock = options.clock ?? systemClock;
  const sourceOf = (name: string): InboundSource => {
    const source = sources.get(name);
    if (!source) {
      throw new InboundError(
        "UNKNOWN_SOURCE",
        `No inbound source named ${JSON.stringify(name)}; configured: ${[...sources.keys()].join(", ") || "none"}.`,
      );
    }
    return source;
  };

  async function verify(name: string, request: InboundRequest): Promise<VerifiedEvent<never>> {
    const source = sourceOf(name);
    if (request.body.byteLength > source.maxBodyBytes) {
      throw payloadTooLarge(source.maxBodyBytes, name);
    }
    const now = clock.now();
    // Synchronous where node:crypto is: the Node gate awaits nothing more than it did before Web Crypto.
    const { verified, verifierIndex } = syncCrypto
      ? runVerifiers(source, request, now)
      : await runVerifiersAsync(source, request, now);
    let payload = parsePayload(source, request.body);
    // A catalog event also carries its type and data on the event itself, for the handler to narrow.
    let catalogEvent: { type: string; data: unknown } | undefined;
    if (source.events) {
      const envelope = await checkCatalogEvent(source, source.events, payload);
      payload = envelope;
      catalogEvent = { type: envelope.type, data: envelope.data };
    } else if (source.schema) {
      const result = await source.schema["~standard"].validate(payload);
      if (result.issues) {
        const detail = result.issues
          .slice(0, 5)
          .map((i) => `${formatPath(i.path)}${i.message}`)
          .join("; ");
        throw new InboundError(
          "PAYLOAD_INVALID",
          `The payload does not match the schema of source "${name}": ${detail}.`,
        );
      }
      payload = result.value;
    }
    return {
      source: name,
      id: verified.id,
      timestamp: verified.timestamp,
      scheme: verified.scheme,
      verifierIndex,
      keyIndex: verified.keyIndex,
      payload: payload as never,
      body: request.body,
      ...catalogEvent,
    };
  }

  async function handle(
    name: string,
    request: InboundRequest,
    handler: WebhookHandler<never>,
  ): Promise<GateResponse> {
    let event: VerifiedEvent<never>;
    try {
      event = await verify(name, request);
    } catch (error) {
      // A type this receiver does not know yet, acknowledged as asked: the handler never sees it.
      if (
        error instanceof InboundError &&
        error.code === "UNKNOWN_EVENT_TYPE" &&
        sources.get(name)?.unknownTypes === "acknowledge"
      ) {
        return json(200, { ok: true, ignored: true }, { "x-postel-ignored": "unknown-event-type" });
      }
      return errorResponse(error);
    }
    const dedup = sources.get(name)?.dedup ?? null;
    const key = event.id === undefined ? null : { source: name, id: event.id };
    if (dedup && key) {
      const now = clock.now();
      let claim: ClaimResult;
      try {
        claim = await dedup.store.claim(key, now, now + dedup.processingTimeoutMs);
      } catch (error) {
        // Without the dedup record we cannot promise "once": ask the sender to come back.
        const unavailable = new InboundError(
          "DEDUP_UNAVAILABLE",
          "The dedup store is unavailable; retry later.",
        );
        return { ...withRetryAfter(errorResponse(unavailable)), error };
      }
      if (claim === "duplicate") {
        return json(200, { ok: true, duplicate: true }, { "x-postel-duplicate": "true" });
      }
      if (claim === "in-flight") {
        const error = new InboundError(
          "DUPLICATE_IN_FLIGHT",
          "This webhook id is being processed right now; retry later.",
        );
        return withRetryAfter(errorResponse(error));
      }
    }
    try {
      await handler(event);
    } catch (error) {
      // If the release fails too, the record lapses after processingTimeout and the retry runs then.
      if (dedup && key) await dedup.store.release(key).catch(() => undefined);
      const failed = new InboundError(
        "HANDLER_FAILED",
        "The webhook handler failed; the sender should retry.",
      );
      return { ...errorResponse(failed), error };
    }
    if (dedup && key) {
      const now = clock.now();
      try {
        await dedup.store.complete(key, now, now + dedup.ttlMs);
      } catch (error) {
        // The handler did its work: answer 200. The record lapses after processingTimeout (at-least-once).
        return { ...json(200, { ok: true }), error };
      }
    }
    return json(200, { ok: true });
  }

  return {
    sources: [...sources.keys()],
    maxBodyBytes: (name) => sourceOf(name).maxBodyBytes,
    verify: verify as unknown as Receiver<S>["verify"],
    handle: (options.telemetry
      ? traceGate(handle, options.telemetry)
      : handle) as unknown as Receiver<S>["handle"],
  };
}

// When several verifiers all fail, report the most specific reason, not "header missing" from a
// scheme that simply does not apply to this request.
const SPECIFICITY = ["TIMESTAMP_OUT_OF_WINDOW", "SIGNATURE_INVALID", "MALFORMED_HEADER", "MISSING_HEADER"];

/** Runs the source's verifiers in order until one accepts, each with its synchronous `verify` (node:crypto). */
function runVerifiers(source: InboundSource, request: InboundRequest, now: number) {
  const failures: WebhookVerificationError[] = [];
  for (const [verifierIndex, verifier] of source.verifiers.entries()) {
    try {
      return { verified: verifier.verify(request, now) as VerifiedWebhook, verifierIndex };
    } catch (error) {
      failures.push(verificationFailure(error, source, verifier, verifierIndex));
    }
  }
  return refuse(failures);
}

/**
 * The same off Node, where crypto is Web Crypto: `verifyAsync` where a verifier has it (every verifier
 * of this package), else `verify` (a custom verifier written before it).
 */
async function runVerifiersAsync(source: InboundSource, request: InboundRequest, now: number) {
  const failures: WebhookVerificationError[] = [];
  for (const [verifierIndex, verifier] of source.verifiers.entries()) {
    try {
      const verified: VerifiedWebhook = verifier.verifyAsync
        ? await verifier.verifyAsync(request, now)
        : verifier.verify(request, now);
      return { verified, verifierIndex };
    } catch (error) {
      failures.push(verificationFailure(error, source, verifier, verifierIndex));
    }
  }
  return refuse(failures);
}

/** A verifier's refusal, kept to pick the most specific; anything else is a misconfigured receiver. */
function verificationFailure(
  error: unknown,
  source: InboundSource,
  verifier: Verifier,
  verifierIndex: number,
): WebhookVerificationError {
  if (error instanceof WebhookVerificationError) return error;
  throw new InboundError(
    "RECEIVER_MISCONFIGURED",
    `Verifier ${verifierIndex} (${verifier.scheme}) of source "${source.name}" failed: ${isPostelError(error) ? error.message : "unexpected error"}`,
    { cause: error },
  );
}

/** No verifier accepted: the most specific refusal, as an InboundError. */
function refuse(failures: WebhookVerificationError[]): never {
  failures.sort((a, b) => SPECIFICITY.indexOf(a.code) - SPECIFICITY.indexOf(b.code));
  const best = failures[0];
  throw new InboundError(
    (best?.code ?? "SIGNATURE_INVALID") as "SIGNATURE_INVALID",
    best?.message ?? "No verifier accepted the request.",
    { cause: best },
  );
}

/** The body as a catalog event: a Standard Webhooks envelope of a declared type, `data` as its schema outputs it. */
async function checkCatalogEvent(
  source: InboundSource,
  catalog: ReceivingCatalog,
  payload: unknown,
): Promise<CatalogPayload> {
  const body = payload as Partial<CatalogPayload> | null;
  if (
    typeof body !== "object" ||
    body === null ||
    Array.isArray(body) ||
    typeof body.type !== "string" ||
    typeof body.timestamp !== "string" ||
    !("data" in body)
  ) {
    throw new InboundError(
      "PAYLOAD_INVALID",
      `Source "${source.name}" takes catalog events: a JSON object { type, timestamp, data }.`,
    );
  }
  const definition = Object.hasOwn(catalog.definitions, body.type)
    ? catalog.definitions[body.type]
    : undefined;
  if (definition === undefined) {
    throw new InboundError(
      "UNKNOWN_EVENT_TYPE",
      `Event type ${JSON.stringify(body.type.slice(0, 255))} is not in the catalog of source "${source.name}".`,
    );
  }
  const result = await definition.schema["~standard"].validate(body.data);
  if (result.issues) {
    const detail = result.issues
      .slice(0, 5)
      .map((i) => `data${i.path && i.path.length > 0 ? "." : ""}${formatPath(i.path)}${i.message}`)
      .join("; ");
    throw new InboundError(
      "PAYLOAD_INVALID",
      `The data does not match the schema of ${JSON.stringify(body.type)} (source "${source.name}"): ${detail}.`,
    );
  }
  return { type: body.type, timestamp: body.timestamp, data: result.value };
}

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

function parsePayload(source: InboundSource, body: Uint8Array): unknown {
  let text: string;
  try {
    text = decoder.decode(body);
  } catch {
    if (source.parse === "text") return body;
    throw new InboundError(
      "PAYLOAD_INVALID",
      'The verified body is not valid UTF-8, so it cannot be parsed; use parse: "text" to receive the bytes.',
    );
  }
  if (source.parse === "text") return text;
  if (source.parse === "form") return Object.fromEntries(new URLSearchParams(text));
  try {
    return JSON.parse(text);
  } catch {
    throw new InboundError(
      "PAYLOAD_INVALID",
      'The verified body is not valid JSON; use parse: "text" or "form" for other content types.',
    );
  }
}

function formatPath(path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined): string {
  if (!path || path.length === 0) return "";
  return `${path.map((p) => String(typeof p === "object" ? p.key : p)).join(".")}: `;
}

function withRetryAfter(response: GateResponse): GateResponse {
  return { ...response, headers: { ...response.headers, "retry-after": "5" } };
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): GateResponse {
  return { status, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) };
}

/** The gate's answer for an error: `{ "error": { code, message } }` with the code in `x-postel-error`. */
export function errorResponse(error: unknown): GateResponse {
  const inbound =
    error instanceof InboundError
      ? error
      : new InboundError("RECEIVER_MISCONFIGURED", "The receiver failed unexpectedly.", { cause: error });
  return json(
    inbound.status,
    { error: { code: inbound.code, message: inbound.message } },
    { "x-postel-error": inbound.code },
  );
}
