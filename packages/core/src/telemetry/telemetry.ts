import type {
  Attributes,
  Link,
  Meter,
  MeterProvider,
  Span,
  TextMapPropagator,
  Tracer,
  TracerProvider,
} from "@opentelemetry/api";
import type { Clock } from "../clock.js";
import type { TelemetryOptions } from "../config/options.js";
import type { AttemptEnd, AttemptObserver, Emitter, RecordedOutcome } from "../engine/events.js";
import type { AttemptRecord, ClaimedDelivery, EndpointRecord } from "../storage/records.js";
import type { DeliveryOutcome, StorageCapabilities } from "../storage/storage.js";
import type { OpenTelemetryApiModule } from "./load-api.js";
import { AttemptCounts, createInstruments, ENDPOINT_STATES, type Instruments } from "./metrics.js";
import { type Backlog, readBacklog } from "./read-backlog.js";

/** What the telemetry needs from the Postel instance. */
export interface TelemetryDeps {
  /** Only the operations capability (the backlog gauges); none: the gauges stay empty. */
  storage: Pick<StorageCapabilities<unknown>, "operations">;
  clock: Clock;
  /** Where reading errors go, and where the telemetry observes every attempt. */
  events: Emitter;
  /** Every live endpoint, cached (the endpoint state gauge reads it). */
  endpoints: () => Promise<ReadonlyMap<string, { record: EndpointRecord }>>;
}

const NAME = "@postel/core";
// How long one backlog read serves every gauge and every reader that collects meanwhile.
const BACKLOG_CACHE_MS = 1_000;
// Sanitised endpoint URLs kept (each endpoint's URL is parsed once, not per attempt).
const URL_CACHE_SIZE = 1_000;

const carrierSetter = {
  set(carrier: Record<string, string>, key: string, value: string) {
    carrier[key] = value;
  },
};
const headerPairsSetter = {
  set(pairs: string[], key: string, value: string) {
    pairs.push(key, value);
  },
};
const carrierGetter = {
  get: (carrier: Record<string, string>, key: string) => carrier[key],
  keys: (carrier: Record<string, string>) => Object.keys(carrier),
};

/**
 * Postel's traces and metrics, built only when `telemetry` is on: it then observes every attempt
 * (see `AttemptObserver`); with it off the engine pays one length check per delivery.
 */
export class Telemetry implements AttemptObserver {
  readonly #api: OpenTelemetryApiModule;
  readonly #tracer: Tracer;
  readonly #propagator: TextMapPropagator;
  readonly #instruments: Instruments;
  readonly #deps: TelemetryDeps;
  readonly #urls = new Map<string, { full: string; address: string; port: number }>();
  #backlog: { at: number; read: Promise<Backlog | null> } | null = null;
  // A plain count, observed by a gauge: an up-down counter cost two SDK calls per attempt.
  #inFlight = 0;
  readonly #attempts = new AttemptCounts();

  constructor(api: OpenTelemetryApiModule, options: TelemetryOptions, deps: TelemetryDeps) {
    this.#api = api;
    this.#deps = deps;
    this.#tracer = (
      (options.tracerProvider as TracerProvider | undefined) ?? api.trace.getTracerProvider()
    ).getTracer(NAME);
    this.#propagator = (options.propagator as TextMapPropagator | undefined) ?? api.propagation;
    const meter = (
      (options.meterProvider as MeterProvider | undefined) ?? api.metrics.getMeterProvider()
    ).getMeter(NAME);
    this.#instruments = createInstruments(meter);
    this.#instruments.attempts.addCallback((result) => {
      for (const { attributes, count } of this.#attempts.entries()) result.observe(count, attributes);
    });
    this.#observeGauges(meter);
    deps.events.observe(this);
  }

  /**
   * The caller's trace context, as the JSON of the propagator's fields (W3C: `traceparent` and
   * `tracestate`), to store with the message; undefined when no span is active.
   */
  sendContext(): string | undefined {
    const active = this.#api.context.active();
    const span = this.#api.trace.getSpanContext(active);
    if (span === undefined || !this.#api.isSpanContextValid(span)) return undefined;
    const carrier: Record<string, string> = {};
    this.#propagator.inject(active, carrier, carrierSetter);
    return Object.keys(carrier).length === 0 ? undefined : JSON.stringify(carrier);
  }

  /**
   * Starts the CLIENT span of one attempt and appends its `traceparent` (and whatever else the
   * propagator writes) to the request's header pairs; returns what ends the span. The signature
   * covers id, timestamp and body only, so these headers change nothing the receiver verifies.
   *
   * The span is a root linked to the send, not its child: a retry may run days after `send()`, and a
   * child would stretch the sender's trace over days (and inherit a sampling decision made then).
   * The messaging conventions link deliveries to the message's creation context the same way.
   */
  start(
    { delivery, message }: ClaimedDelivery,
    endpoint: EndpointRecord,
    headers: string[],
    probe: boolean,
  ): AttemptEnd {
    const url = this.#sanitised(endpoint.url);
    const attemptNumber = delivery.attemptsMade + 1;
    const attributes: Attributes = {
      "http.request.method": "POST",
      "url.full": url.full,
      "server.address": url.address,
      "server.port": url.port,
      "postel.endpoint.id": delivery.endpointId,
      "postel.message.id": message.id,
      "postel.delivery.id": delivery.id,
      "postel.webhook.id": delivery.webhookId,
      "postel.attempt.number": attemptNumber,
    };
    if (attemptNumber > 1) attributes["http.request.resend_count"] = attemptNumber - 1;
    if (probe) attributes["postel.circuit.probe"] = true;
    const links = this.#sendLinks(message.traceContext);
    const api = this.#api;
    const span = this.#tracer.startSpan(
      "POST",
      links === undefined
        ? { kind: api.SpanKind.CLIENT, attributes }
        : { kind: api.SpanKind.CLIENT, attributes, links },
      api.ROOT_CONTEXT,
    );
    this.#propagator.inject(api.trace.setSpan(api.ROOT_CONTEXT, span), headers, headerPairsSetter);
    this.#inFlight++;
    return (attempt, outcome) => this.#end(span, attempt, outcome);
  }

  /** Ends an attempt's span with its response and outcome, and counts it. */
  #end(span: Span, attempt: AttemptRecord, outcome: DeliveryOutcome): void {
    const { statusCode, errorCode } = attempt;
    if (statusCode !== null) span.setAttribute("http.response.status_code", statusCode);
    const errorType = statusCode === null ? errorCode : statusCode >= 400 ? String(statusCode) : null;
    if (errorType !== null) span.setAttribute("error.type", errorType);
    span.setAttribute("postel.attempt.outcome", attempt.outcome);
    span.setAttribute("postel.delivery.transition", outcome.transition.kind);
    if (attempt.outcome !== "success") {
      span.setStatus({
        code: this.#api.SpanStatusCode.ERROR,
        message: attempt.error ?? errorType ?? "failed",
      });
    }
    span.end();
    this.#inFlight--;
    this.#attempts.add(attempt.outcome, statusCode, errorCode);
    this.#instruments.attemptDuration.record(attempt.latencyMs / 1000);
  }

  /** Counts what storage accepted: deliveries (end to end) and dead letters. */
  recorded(outcomes: readonly RecordedOutcome[]): void {
    for (const { claimed, outcome } of outcomes) {
      const { transition, attempt } = outcome;
      if (transition.kind === "succeeded" && attempt) {
        const deliveredAt = attempt.startedAt + attempt.latencyMs;
        this.#instruments.deliveryDuration.record(
          Math.max(0, deliveredAt - claimed.message.createdAt) / 1000,
        );
      } else if (transition.kind === "dead-lettered" || transition.kind === "failed") {
        this.#instruments.deadLetters.add(1, { "postel.delivery.status": transition.kind });
      }
    }
  }

  #sendLinks(traceContext: string | undefined): Link[] | undefined {
    if (traceContext === undefined) return undefined;
    let carrier: Record<string, string>;
    try {
      carrier = JSON.parse(traceContext);
    } catch {
      return undefined;
    }
    const context = this.#propagator.extract(this.#api.ROOT_CONTEXT, carrier, carrierGetter);
    const spanContext = this.#api.trace.getSpanContext(context);
    return spanContext === undefined ? undefined : [{ context: spanContext }];
  }

  /** The endpoint URL without credentials, query or fragment (they may carry secrets). */
  #sanitised(raw: string): { full: string; address: string; port: number } {
    let url = this.#urls.get(raw);
    if (url === undefined) {
      const parsed = new URL(raw);
      const port = parsed.port === "" ? (parsed.protocol === "https:" ? 443 : 80) : Number(parsed.port);
      url = { full: `${parsed.protocol}//${parsed.host}${parsed.pathname}`, address: parsed.hostname, port };
      if (this.#urls.size >= URL_CACHE_SIZE) this.#urls.clear();
      this.#urls.set(raw, url);
    }
    return url;
  }

  /**
   * The backlog and endpoint state gauges, observed by one callback: one storage read (cached for a
   * second) per collection, however many gauges and readers.
   */
  #observeGauges(meter: Meter): void {
    const backlog = meter.createObservableGauge("postel.delivery.backlog", {
      description: "Deliveries due now and not leased, every instance's (the backlog.due of stats()).",
      unit: "{delivery}",
    });
    const oldest = meter.createObservableGauge("postel.delivery.backlog.oldest_age", {
      description: "How long the oldest due delivery has been waiting.",
      unit: "s",
    });
    const inFlight = meter.createObservableGauge("postel.delivery.in_flight", {
      description: "HTTP delivery attempts in flight in this process.",
      unit: "{request}",
    });
    const state = meter.createObservableGauge("postel.endpoint.state", {
      description: "1 for each endpoint's current state (active, circuit-open, disabled), 0 for the others.",
      unit: "{endpoint}",
    });
    meter.addBatchObservableCallback(
      async (result) => {
        result.observe(inFlight, this.#inFlight);
        try {
          const [read, endpoints] = await Promise.all([this.#readBacklog(), this.#deps.endpoints()]);
          // A storage without the operations capability has no backlog to report: the gauges stay empty.
          if (read !== null) {
            result.observe(backlog, read.due);
            const waited = read.oldestDueAt === null ? 0 : this.#deps.clock.now() - read.oldestDueAt;
            result.observe(oldest, Math.max(0, waited) / 1000);
          }
          for (const { record } of endpoints.values()) {
            for (const s of ENDPOINT_STATES) {
              result.observe(state, record.state === s ? 1 : 0, {
                "postel.endpoint.id": record.id,
                "postel.endpoint.state": s,
              });
            }
          }
        } catch (error) {
          this.#deps.events.emit("error", { error, context: "reading the backlog for metrics" });
        }
      },
      [backlog, oldest, inFlight, state],
    );
  }

  #readBacklog(): Promise<Backlog | null> {
    const now = this.#deps.clock.now();
    if (this.#backlog === null || now - this.#backlog.at >= BACKLOG_CACHE_MS) {
      const read = readBacklog(this.#deps.storage, now);
      // A failed read is not cached: the next collection tries again.
      read.catch(() => {
        if (this.#backlog?.read === read) this.#backlog = null;
      });
      this.#backlog = { at: now, read };
    }
    return this.#backlog.read;
  }
}
