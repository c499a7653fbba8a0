import * as otel from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { ExportResultCode, W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  type PushMetricExporter,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
  ParentBasedSampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import type { TelemetryOptions } from "@postel/core";
import type { TelemetryMode } from "./protocol.js";

// The OTel SDK set up as an application would (spans batched, metrics read every second), every span
// sampled and exported to nowhere (`noop`) or into memory (`memory`), or 1% of the traces sampled
// (`sampled`: the way to run traces at full rate), exported to nowhere. `off` leaves telemetry out.
const noopSpans: SpanExporter = {
  export: (_spans, done) => done({ code: ExportResultCode.SUCCESS }),
  shutdown: async () => {},
};
const noopMetrics: PushMetricExporter = {
  export: (_metrics, done) => done({ code: ExportResultCode.SUCCESS }),
  forceFlush: async () => {},
  shutdown: async () => {},
  selectAggregationTemporality: () => AggregationTemporality.CUMULATIVE,
};

/** `Postel({ telemetry })` for a bench worker in `mode`. */
export function telemetryFor(mode: TelemetryMode): TelemetryOptions | false {
  if (mode === "off") return false;
  otel.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  if (mode === "sdk") {
    // The application runs the SDK (its context manager tracks every async operation), Postel's
    // telemetry stays off: what the application pays before Postel records anything.
    otel.trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(noopSpans)] }),
    );
    // From the first thing run in a context (an HTTP server span, a span export), Node tracks every
    // async operation for the context manager; before it, AsyncLocalStorage costs nothing.
    otel.context.with(otel.context.active(), () => {});
    return false;
  }
  const spans = mode === "memory" ? new InMemorySpanExporter() : noopSpans;
  const metrics =
    mode === "memory" ? new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE) : noopMetrics;
  return {
    tracerProvider: new BasicTracerProvider({
      ...(mode === "sampled"
        ? { sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.01) }) }
        : {}),
      spanProcessors: [new BatchSpanProcessor(spans)],
    }),
    meterProvider: new MeterProvider({
      readers: [new PeriodicExportingMetricReader({ exporter: metrics, exportIntervalMillis: 1_000 })],
    }),
    propagator: new W3CTraceContextPropagator(),
  };
}
