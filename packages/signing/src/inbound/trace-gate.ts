import type * as otel from "@opentelemetry/api";
import { ConfigurationError } from "../errors.js";
import { type HeadersLike, readHeader } from "../headers.js";
import type { GateResponse, InboundRequest, WebhookHandler } from "./gate-types.js";

/**
 * The `@opentelemetry/api` module, handed over by the app (`import * as otel from
 * "@opentelemetry/api"`): the gate never imports it, so a receiver without telemetry loads and
 * installs nothing more. Described by the members the gate uses, so these types need no
 * `@opentelemetry/api` either.
 */
export interface OpenTelemetryApi {
  readonly ROOT_CONTEXT: object;
  readonly context: { active(): unknown };
  readonly trace: { getTracerProvider(): unknown };
  readonly propagation: object;
}

/** Tracing of the receiving gate: `Receiver({ sources, telemetry: { api: otel } })`. */
export interface ReceiverTelemetry {
  /** `import * as otel from "@opentelemetry/api"`. */
  api: OpenTelemetryApi;
  /** Where spans go. Default: the global tracer provider (`otel.trace.getTracerProvider()`). */
  tracerProvider?: { getTracer(name: string, version?: string): unknown };
  /** Reads an incoming `traceparent`. Default: the global propagator (`otel.propagation`). */
  propagator?: { extract(context: never, carrier: never, getter: never): unknown };
}

type Handle = (
  name: string,
  request: InboundRequest,
  handler: WebhookHandler<never>,
) => Promise<GateResponse>;

const headerGetter: otel.TextMapGetter<HeadersLike> = {
  get: (headers, key) => {
    try {
      return readHeader(headers, key);
    } catch {
      // A traceparent repeated with different values: start a new trace rather than guess.
      return undefined;
    }
  },
  keys: (headers) =>
    typeof (headers as { keys?: unknown }).keys === "function"
      ? [...(headers as unknown as { keys(): Iterable<string> }).keys()]
      : Object.keys(headers),
};

/**
 * Wraps the gate in one CONSUMER span per request, `process <source>`. CONSUMER rather than
 * SERVER: the HTTP exchange is the framework's (its HTTP instrumentation, when present, owns the
 * SERVER span, and OTel's conventions want no second one under it); this span is the processing
 * of a pushed message, as in the messaging conventions. Its parent is the active span when there
 * is one (that HTTP instrumentation already continued the sender's `traceparent`), else the
 * incoming `traceparent` itself. The handler runs inside it, so the app's spans are its children.
 */
export function traceGate(handle: Handle, telemetry: ReceiverTelemetry): Handle {
  const api = checkApi(telemetry) as unknown as typeof otel;
  const tracer = (
    (telemetry.tracerProvider as otel.TracerProvider | undefined) ?? api.trace.getTracerProvider()
  ).getTracer("@postel/signing");
  const propagator = (telemetry.propagator as otel.TextMapPropagator | undefined) ?? api.propagation;
  return async (name, request, handler) => {
    const active = api.context.active();
    const parent =
      api.trace.getSpan(active) === undefined
        ? propagator.extract(api.ROOT_CONTEXT, request.headers, headerGetter)
        : active;
    const span = tracer.startSpan(
      `process ${name}`,
      {
        kind: api.SpanKind.CONSUMER,
        attributes: {
          "messaging.operation.type": "process",
          "messaging.destination.name": name,
          "postel.inbound.source": name,
        },
      },
      parent,
    );
    let webhookId: string | undefined;
    const response = await api.context.with(api.trace.setSpan(parent, span), () =>
      handle(name, request, (event) => {
        webhookId = event.id;
        return handler(event);
      }),
    );
    const code = response.headers["x-postel-error"];
    if (webhookId !== undefined) {
      span.setAttribute("messaging.message.id", webhookId);
      span.setAttribute("postel.webhook.id", webhookId);
    }
    span.setAttribute("http.response.status_code", response.status);
    const duplicate = response.headers["x-postel-duplicate"] === "true";
    span.setAttribute("postel.inbound.outcome", code ?? (duplicate ? "duplicate" : "handled"));
    if (code !== undefined) {
      span.setAttribute("error.type", code);
      // 4xx is the sender's doing (like an HTTP server span); 5xx is ours: the handler or dedup failed.
      if (response.status >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR, message: code });
    }
    span.end();
    return response;
  };
}

function checkApi(telemetry: ReceiverTelemetry): OpenTelemetryApi {
  const api = (telemetry as { api?: Partial<OpenTelemetryApi> } | null)?.api;
  if (api && typeof api.context?.active === "function" && api.propagation && api.ROOT_CONTEXT) {
    return api as OpenTelemetryApi;
  }
  throw new ConfigurationError(
    [
      {
        path: "telemetry.api",
        message:
          'must be the @opentelemetry/api module: import * as otel from "@opentelemetry/api", then telemetry: { api: otel }',
      },
    ],
    "Receiver options",
  );
}
