import * as otel from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  MeterProvider,
  MetricReader,
} from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { createSigner, verify } from "@postel/signing";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { LinearBackoff } from "../src/backoff.js";
import { ManualClock } from "../src/clock.js";
import { ConfigurationError } from "../src/errors.js";
import { Postel, type PostelInstance } from "../src/postel.js";
import { seededRandom } from "../src/random.js";
import { InMemoryStorage } from "../src/storage/in-memory-storage.js";
import type { Storage } from "../src/storage/storage.js";
import { ATTEMPT_DURATION_BUCKETS, DELIVERY_DURATION_BUCKETS } from "../src/telemetry/metrics.js";
import { type Receiver, startReceiver } from "./support/receiver.js";

class TestReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected async onShutdown(): Promise<void> {}
  protected async onForceFlush(): Promise<void> {}
  /** Every data point of the metric called `name`. */
  async points(name: string): Promise<DataPoint<unknown>[]> {
    const { resourceMetrics } = await this.collect();
    const metric = resourceMetrics.scopeMetrics
      .flatMap((s) => s.metrics)
      .find((m) => m.descriptor.name === name);
    return (metric?.dataPoints ?? []) as DataPoint<unknown>[];
  }
  async descriptor(name: string) {
    const { resourceMetrics } = await this.collect();
    return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name)
      ?.descriptor;
  }
}

const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => {
  otel.context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  otel.context.disable();
});

interface Setup {
  postel: PostelInstance<Storage<unknown>>;
  clock: ManualClock;
  storage: ReturnType<typeof InMemoryStorage>;
  receiver: Receiver;
  spans: InMemorySpanExporter;
  reader: TestReader;
  app: otel.Tracer;
}

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0)) await close();
});

async function setup(telemetry: "on" | "off" = "on"): Promise<Setup> {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const clock = new ManualClock(1_750_000_000_000);
  const storage = InMemoryStorage();
  const receiver = await startReceiver();
  const postel = Postel({
    clock,
    random: seededRandom(7),
    telemetry:
      telemetry === "on"
        ? { tracerProvider, meterProvider, propagator: new W3CTraceContextPropagator() }
        : false,
    outbound: {
      storage,
      retryPolicy: LinearBackoff({ step: "1s", maxAttempts: 1 }),
      http: { allowPrivateNetworks: true, timeout: "2s" },
    },
  });
  open.push(async () => {
    await postel.close();
    await receiver.close();
    await meterProvider.shutdown();
  });
  return { postel, clock, storage, receiver, spans, reader, app: tracerProvider.getTracer("app") };
}

/** Sends inside an application span, as an HTTP handler of the app would. */
async function sendInSpan(s: Setup, event: { type: string; data: unknown }) {
  const span = s.app.startSpan("POST /orders");
  const result = await otel.context.with(otel.trace.setSpan(otel.ROOT_CONTEXT, span), () =>
    s.postel.outbound.send(event),
  );
  span.end();
  return { span, result };
}

const attemptSpans = (s: Setup): ReadableSpan[] =>
  s.spans.getFinishedSpans().filter((span) => span.kind === otel.SpanKind.CLIENT);

describe("traces", () => {
  test("send() stores the caller's trace context; each attempt is a CLIENT span linked to it, its traceparent on the wire", async () => {
    const s = await setup();
    const endpoint = await s.postel.outbound.endpoints.create({
      url: `${s.receiver.url("/hook")}?token=s3cret`,
      types: ["order.*"],
    });
    const { span: sendSpan, result } = await sendInSpan(s, { type: "order.created", data: { id: 1 } });
    const stored = await s.storage.getMessage(result.id);
    expect(JSON.parse(stored!.traceContext!)).toEqual({
      traceparent: `00-${sendSpan.spanContext().traceId}-${sendSpan.spanContext().spanId}-01`,
    });

    await s.postel.drain();
    const [attempt] = attemptSpans(s);
    const [delivery] = await s.postel.outbound.messages.deliveries(result.id);
    expect(attempt).toMatchObject({
      name: "POST",
      kind: otel.SpanKind.CLIENT,
      attributes: {
        "http.request.method": "POST",
        "url.full": s.receiver.url("/hook"),
        "server.address": "127.0.0.1",
        "server.port": Number(new URL(s.receiver.url()).port),
        "http.response.status_code": 200,
        "postel.endpoint.id": endpoint.id,
        "postel.message.id": result.id,
        "postel.delivery.id": delivery!.id,
        "postel.webhook.id": delivery!.webhookId,
        "postel.attempt.number": 1,
        "postel.attempt.outcome": "success",
        "postel.delivery.transition": "succeeded",
      },
    });
    expect(attempt!.attributes["error.type"]).toBeUndefined();
    expect(attempt!.attributes["http.request.resend_count"]).toBeUndefined();
    // A root of its own trace, linked to the send.
    expect(attempt!.parentSpanContext).toBeUndefined();
    expect(attempt!.spanContext().traceId).not.toBe(sendSpan.spanContext().traceId);
    expect(attempt!.links.map((link) => link.context.spanId)).toEqual([sendSpan.spanContext().spanId]);
    expect(attempt!.links[0]!.context.traceId).toBe(sendSpan.spanContext().traceId);

    const [request] = s.receiver.requests;
    expect(request!.headers.traceparent).toBe(
      `00-${attempt!.spanContext().traceId}-${attempt!.spanContext().spanId}-01`,
    );
    // The signature covers id, timestamp and body: the receiver still verifies it, traceparent and all.
    const secret = await s.postel.outbound.endpoints.secret(endpoint.id);
    expect(() =>
      verify(request!.body, request!.headers as Record<string, string>, {
        keys: secret,
        now: () => s.clock.now(),
      }),
    ).not.toThrow();
    // And the signature is exactly the one of id, timestamp and body alone.
    const unsigned = createSigner(secret).sign(
      String(request!.headers["webhook-id"]),
      Number(request!.headers["webhook-timestamp"]),
      request!.body,
    );
    expect(request!.headers["webhook-signature"]).toBe(unsigned["webhook-signature"]);
  });

  test("a retry is a new span, linked to the same send, with its resend count and error", async () => {
    const s = await setup();
    s.receiver.script("/hook", (index) => (index === 0 ? 503 : 200));
    await s.postel.outbound.endpoints.create({ url: s.receiver.url("/hook"), types: ["*"] });
    const { span: sendSpan } = await sendInSpan(s, { type: "order.created", data: {} });
    await s.postel.drain();
    s.clock.advance(1_500);
    await s.postel.drain();
    const [first, second] = attemptSpans(s);
    expect(first!.attributes).toMatchObject({
      "http.response.status_code": 503,
      "error.type": "503",
      "postel.attempt.outcome": "retryable",
      "postel.delivery.transition": "retry",
    });
    expect(first!.status.code).toBe(otel.SpanStatusCode.ERROR);
    expect(second!.attributes).toMatchObject({
      "postel.attempt.number": 2,
      "http.request.resend_count": 1,
      "postel.delivery.transition": "succeeded",
    });
    expect(second!.spanContext().traceId).not.toBe(first!.spanContext().traceId);
    for (const span of [first, second]) {
      expect(span!.links[0]!.context.spanId).toBe(sendSpan.spanContext().spanId);
    }
    const wire = s.receiver.on("/hook").map((r) => r.headers.traceparent);
    expect(wire).toEqual(
      [first, second].map((span) => `00-${span!.spanContext().traceId}-${span!.spanContext().spanId}-01`),
    );
  });

  test("a network error is the span's error.type; a send outside any span stores nothing and links nothing", async () => {
    const s = await setup();
    s.receiver.script("/hook", "reset");
    await s.postel.outbound.endpoints.create({ url: s.receiver.url("/hook"), types: ["*"] });
    const { id } = await s.postel.outbound.send({ type: "order.created", data: {} });
    expect((await s.storage.getMessage(id))!.traceContext).toBeUndefined();
    await s.postel.drain();
    const [attempt] = attemptSpans(s);
    expect(attempt!.links).toEqual([]);
    expect(attempt!.attributes["http.response.status_code"]).toBeUndefined();
    expect(attempt!.attributes["error.type"]).toMatch(/^[A-Z_]+$/);
  });

  test("sendBatch() stores the trace context with every message", async () => {
    const s = await setup();
    const span = s.app.startSpan("import");
    const results = await otel.context.with(otel.trace.setSpan(otel.ROOT_CONTEXT, span), () =>
      s.postel.outbound.sendBatch([
        { type: "a", data: 1 },
        { type: "b", data: 2 },
      ]),
    );
    for (const { id } of results) {
      expect((await s.storage.getMessage(id))!.traceContext).toContain(span.spanContext().spanId);
    }
  });

  test("off (the default): no span, no trace context stored, no traceparent sent", async () => {
    const s = await setup("off");
    await s.postel.outbound.endpoints.create({ url: s.receiver.url("/hook"), types: ["*"] });
    const { result } = await sendInSpan(s, { type: "order.created", data: {} });
    expect((await s.storage.getMessage(result.id))!.traceContext).toBeUndefined();
    await s.postel.drain();
    expect(s.receiver.on("/hook")).toHaveLength(1);
    expect(s.receiver.on("/hook")[0]!.headers.traceparent).toBeUndefined();
    expect(attemptSpans(s)).toEqual([]);
    expect(await s.reader.points("postel.delivery.attempts")).toEqual([]);
  });
});

describe("metrics", () => {
  test("attempts by outcome and status class, attempt and end-to-end durations with webhook-sized buckets, dead letters", async () => {
    const s = await setup();
    s.receiver.script("/fail", 500);
    await s.postel.outbound.endpoints.create({ url: s.receiver.url("/ok"), types: ["ok"] });
    await s.postel.outbound.endpoints.create({ url: s.receiver.url("/fail"), types: ["fail"] });
    await s.postel.outbound.send({ type: "ok", data: {} });
    await s.postel.outbound.send({ type: "fail", data: {} });
    s.clock.advance(90_000); // delivered 90 s after send()
    await s.postel.drain();
    s.clock.advance(1_500);
    await s.postel.drain(); // the retry fails too: dead-lettered

    const attempts = await s.reader.points("postel.delivery.attempts");
    const byKey = Object.fromEntries(
      attempts.map((p) => [
        `${p.attributes["postel.attempt.outcome"]} ${p.attributes["postel.http.status_class"]}`,
        p.value,
      ]),
    );
    expect(byKey).toEqual({ "success 2xx": 1, "retryable 5xx": 2 });

    const duration = (await s.reader.points("postel.delivery.attempt.duration")) as DataPoint<Histogram>[];
    expect(duration[0]!.value.buckets.boundaries).toEqual(ATTEMPT_DURATION_BUCKETS);
    expect((await s.reader.descriptor("postel.delivery.attempt.duration"))?.unit).toBe("s");

    const [endToEnd] = (await s.reader.points("postel.delivery.duration")) as DataPoint<Histogram>[];
    expect(endToEnd!.value.buckets.boundaries).toEqual(DELIVERY_DURATION_BUCKETS);
    expect(DELIVERY_DURATION_BUCKETS[0]).toBe(0.005);
    expect(DELIVERY_DURATION_BUCKETS.at(-1)).toBeGreaterThanOrEqual(7 * 86_400);
    expect(endToEnd!.value.count).toBe(1);
    // 90 s (plus the request's own latency, real milliseconds) lands in the (60, 300] bucket.
    expect(endToEnd!.value.sum).toBeGreaterThanOrEqual(90);
    expect(endToEnd!.value.sum).toBeLessThan(92);
    const bucket = DELIVERY_DURATION_BUCKETS.indexOf(300);
    expect(endToEnd!.value.buckets.counts[bucket]).toBe(1);

    const [dead] = await s.reader.points("postel.delivery.dead_letters");
    expect(dead).toMatchObject({ value: 1, attributes: { "postel.delivery.status": "dead-lettered" } });
    const [inFlight] = await s.reader.points("postel.delivery.in_flight");
    expect(inFlight!.value).toBe(0);
  });

  test("backlog and endpoint state gauges, read from storage once per collection", async () => {
    const s = await setup();
    const on = await s.postel.outbound.endpoints.create({ url: s.receiver.url("/a"), types: ["*"] });
    const off = await s.postel.outbound.endpoints.create({ url: s.receiver.url("/b"), types: ["*"] });
    await s.postel.outbound.endpoints.disable(off.id);
    s.receiver.script("/a", "hang");
    await s.postel.outbound.send({ type: "x", data: {} });
    // Fan out without delivering: deliveries of the disabled endpoint are held, the other's pending.
    let reads = 0;
    const stats = s.storage.operations!.stats.bind(s.storage.operations);
    s.storage.operations!.stats = (query) => {
      reads++;
      return stats(query);
    };
    const states = await s.reader.points("postel.endpoint.state");
    const current = states
      .filter((p) => p.value === 1)
      .map((p) => [p.attributes["postel.endpoint.id"], p.attributes["postel.endpoint.state"]]);
    expect(current.sort()).toEqual(
      [
        [on.id, "active"],
        [off.id, "disabled"],
      ].sort(),
    );
    expect(states).toHaveLength(6);
    expect(await s.reader.points("postel.delivery.backlog")).toMatchObject([{ value: 0 }]);
    expect(await s.reader.points("postel.delivery.backlog.oldest_age")).toMatchObject([{ value: 0 }]);
    expect(reads).toBe(1); // the second collection, within a second, reused the read
    s.clock.advance(1_000);
    await s.reader.points("postel.delivery.backlog");
    expect(reads).toBe(2);
  });
});

describe("options", () => {
  test("telemetry must name real providers; every bad field is listed with the fix", () => {
    const bad = () =>
      Postel({
        outbound: { storage: InMemoryStorage() },
        telemetry: { tracerProvider: {} as never, meterProvider: 1 as never, extra: 1 } as never,
      });
    expect(bad).toThrow(ConfigurationError);
    try {
      bad();
    } catch (error) {
      expect((error as ConfigurationError).issues.map((issue) => issue.path).sort()).toEqual([
        "telemetry.extra",
        "telemetry.meterProvider",
        "telemetry.tracerProvider",
      ]);
      expect((error as ConfigurationError).message).toMatch(/TracerProvider/);
    }
  });

  test("telemetry: true takes the global providers", async () => {
    const spans = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
    otel.trace.setGlobalTracerProvider(provider);
    otel.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const receiver = await startReceiver();
    const postel = Postel({
      telemetry: true,
      outbound: { storage: InMemoryStorage(), http: { allowPrivateNetworks: true } },
    });
    try {
      await postel.outbound.endpoints.create({ url: receiver.url("/hook"), types: ["*"] });
      await postel.outbound.send({ type: "a", data: {} });
      await postel.drain();
      expect(spans.getFinishedSpans().map((span) => span.name)).toEqual(["POST"]);
      expect(receiver.on("/hook")[0]!.headers.traceparent).toMatch(/^00-/);
    } finally {
      await postel.close();
      await receiver.close();
      otel.trace.disable();
      otel.propagation.disable();
    }
  });
});
