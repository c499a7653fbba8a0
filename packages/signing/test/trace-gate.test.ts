import * as otel from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { createSigner, generateSecret } from "../src/index.js";
import { ConfigurationError, Receiver } from "../src/inbound.js";

const secret = generateSecret();
const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const propagator = new W3CTraceContextPropagator();
const contextManager = new AsyncLocalStorageContextManager();
const now = 1_750_000_000_000;
const clock = { now: () => now };
const receiver = Receiver({
  sources: { billing: { verify: secret } },
  clock,
  telemetry: { api: otel, tracerProvider, propagator },
});
const INCOMING = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

function request(headers: Record<string, string> = {}, body = '{"type":"invoice.paid"}') {
  const signed = createSigner(secret).sign("msg_1", Math.floor(now / 1000), body);
  return { body: Buffer.from(body), headers: { ...signed, ...headers } };
}

beforeAll(() => {
  otel.context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  otel.context.disable();
});
beforeEach(() => exporter.reset());

describe("the receiving gate with telemetry", () => {
  test("opens a CONSUMER span that continues the incoming traceparent, the handler's spans its children", async () => {
    const tracer = tracerProvider.getTracer("app");
    const response = await receiver.handle("billing", request({ traceparent: INCOMING }), async () => {
      tracer.startSpan("handler work").end();
    });
    expect(response.status).toBe(200);
    const [work, gate] = exporter.getFinishedSpans();
    expect(gate).toMatchObject({
      name: "process billing",
      kind: otel.SpanKind.CONSUMER,
      attributes: {
        "messaging.operation.type": "process",
        "messaging.destination.name": "billing",
        "messaging.message.id": "msg_1",
        "postel.webhook.id": "msg_1",
        "postel.inbound.source": "billing",
        "postel.inbound.outcome": "handled",
        "http.response.status_code": 200,
      },
    });
    expect(gate!.spanContext().traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(gate!.parentSpanContext?.spanId).toBe("b7ad6b7169203331");
    expect(work!.spanContext().traceId).toBe(gate!.spanContext().traceId);
    expect(work!.parentSpanContext?.spanId).toBe(gate!.spanContext().spanId);
    expect(gate!.status.code).toBe(otel.SpanStatusCode.UNSET);
  });

  test("is a child of the active span when the HTTP server instrumentation already opened one", async () => {
    const server = tracerProvider.getTracer("http").startSpan("POST /hooks");
    await otel.context.with(otel.trace.setSpan(otel.ROOT_CONTEXT, server), () =>
      receiver.handle("billing", request({ traceparent: INCOMING }), () => {}),
    );
    server.end();
    const gate = exporter.getFinishedSpans().find((span) => span.name === "process billing");
    expect(gate!.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
  });

  test("records a verification failure's code, without marking the span failed (the sender's fault)", async () => {
    const response = await receiver.handle("billing", request({ "webhook-signature": "v1,AAAA" }), () => {});
    expect(response.status).toBe(401);
    const [gate] = exporter.getFinishedSpans();
    expect(gate!.attributes).toMatchObject({
      "error.type": "SIGNATURE_INVALID",
      "postel.inbound.outcome": "SIGNATURE_INVALID",
      "http.response.status_code": 401,
    });
    expect(gate!.attributes["postel.webhook.id"]).toBeUndefined();
    // Without a traceparent, a new trace.
    expect(gate!.parentSpanContext).toBeUndefined();
    expect(gate!.status.code).toBe(otel.SpanStatusCode.UNSET);
  });

  test("marks the span failed when the handler throws", async () => {
    const response = await receiver.handle("billing", request(), () => {
      throw new Error("boom");
    });
    expect(response.status).toBe(500);
    const [gate] = exporter.getFinishedSpans();
    expect(gate!.status).toMatchObject({ code: otel.SpanStatusCode.ERROR, message: "HANDLER_FAILED" });
    expect(gate!.attributes["error.type"]).toBe("HANDLER_FAILED");
  });

  test("without telemetry no span is made", async () => {
    const plain = Receiver({ sources: { billing: { verify: secret } }, clock });
    expect((await plain.handle("billing", request({ traceparent: INCOMING }), () => {})).status).toBe(200);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  test("something other than the api module is a configuration error that says what to pass", () => {
    expect(() =>
      Receiver({ sources: { billing: { verify: secret } }, telemetry: { api: {} as never } }),
    ).toThrow(ConfigurationError);
    expect(() =>
      Receiver({ sources: { billing: { verify: secret } }, telemetry: { api: {} as never } }),
    ).toThrow(/import \* as otel from "@opentelemetry\/api"/);
  });
});
