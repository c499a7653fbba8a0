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
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import type { TelemetryOptions } from "@postel/core";
import type { TelemetryMode } from "./protocol.js";

// The OTel SDK set up as an application would (every span sampled, batched, metrics read every
// second), exporting to nowhere (`noop`) or into memory (`memory`). `off` leaves telemetry out.
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
  const spans = mode === "noop" ? noopSpans : new InMemorySpanExporter();
  const metrics =
    mode === "noop" ? noopMetrics : new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  return {
    tracerProvider: new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(spans)] }),
    meterProvider: new MeterProvider({
      readers: [new PeriodicExportingMetricReader({ exporter: metrics, exportIntervalMillis: 1_000 })],
    }),
    propagator: new W3CTraceContextPropagator(),
  };
}
