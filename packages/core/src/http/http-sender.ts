import type { IncomingHttpHeaders } from "node:http";
import { Agent, type Dispatcher } from "undici";
import type { HttpOutcome } from "../classify-response.js";
import { systemClock, type TimerHandle } from "../clock.js";
import { createGuardedConnector } from "./guarded-connector.js";
import { mapHttpError } from "./map-error.js";
import { type LookupFn, type NetworkPolicy, systemLookup } from "./network-policy.js";

/** How the sender talks to receivers. `HTTP_SENDER_DEFAULTS` holds the documented defaults. */
export interface HttpSenderOptions {
  /** Deadline for the whole request, body included (default 15000). */
  timeoutMs: number;
  /** Deadline for TCP connect plus TLS handshake (default 5000). */
  connectTimeoutMs: number;
  userAgent: string;
  /** At most this many response-body bytes are kept as the snippet (default 4096). */
  maxResponseBytes: number;
  networkPolicy: NetworkPolicy;
  /** Keep-alive connections per origin (default 64). */
  connectionsPerOrigin?: number;
  /** DNS resolver; defaults to `dns.lookup`. Injectable for tests. */
  lookup?: LookupFn;
}

/** Defaults for `HttpSenderOptions`, for the config layer to fill in. */
export const HTTP_SENDER_DEFAULTS = {
  timeoutMs: 15_000,
  connectTimeoutMs: 5_000,
  maxResponseBytes: 4_096,
  connectionsPerOrigin: 64,
} as const;

/** Posts webhook bytes to receivers over a keep-alive pool. */
export interface HttpSender {
  /**
   * Sends one POST. Never throws: failures come back as `{ kind: "error", code }`. Redirects are not
   * followed. `headers` is an object or flat `[name, value, ...]` pairs with lower-case names (the
   * cheaper form, which workers use); either may set `user-agent` to override the sender's.
   */
  post(
    url: string,
    headers: Record<string, string> | readonly string[],
    body: Uint8Array,
  ): Promise<HttpOutcome>;
  /** Waits for in-flight requests, then closes every pooled connection. */
  close(): Promise<void>;
}

// After the snippet, up to this much more is read so the socket can go back to the pool; a longer
// body costs the socket instead of unbounded time and memory.
const DRAIN_LIMIT_BYTES = 64 * 1024;

/**
 * Creates the sender workers use to deliver webhooks: one undici `Agent` whose connector enforces the
 * network policy on the address actually connected to.
 * @example
 * const sender = createHttpSender({ ...HTTP_SENDER_DEFAULTS, userAgent: "postel", networkPolicy: { allowPrivateNetworks: false } });
 * const outcome = await sender.post("https://example.com/hook", {}, new TextEncoder().encode("{}"));
 */
export function createHttpSender(options: HttpSenderOptions): HttpSender {
  const agent = new Agent({
    connections: options.connectionsPerOrigin ?? HTTP_SENDER_DEFAULTS.connectionsPerOrigin,
    pipelining: 1,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connect: createGuardedConnector({
      networkPolicy: options.networkPolicy,
      lookup: options.lookup ?? systemLookup,
      connectTimeoutMs: options.connectTimeoutMs,
    }),
  });

  const targets = new TargetCache();
  function post(
    url: string,
    headers: Record<string, string> | readonly string[],
    body: Uint8Array,
  ): Promise<HttpOutcome> {
    return new Promise((resolve) => {
      const exchange = new Exchange(options, resolve);
      try {
        const { origin, path } = targets.get(url);
        const opts = {
          origin,
          path,
          method: "POST" as const,
          headers: requestHeaders(headers, options.userAgent),
          body,
        };
        agent.dispatch(opts, exchange);
      } catch (error) {
        exchange.onResponseError(null, error as Error);
      }
    });
  }

  return { post, close: () => agent.close() };
}

/** Flat `[name, value, ...]` pairs for undici: the caller's, with `user-agent` and `content-type` defaulted. */
function requestHeaders(headers: Record<string, string> | readonly string[], userAgent: string): string[] {
  if (isPairs(headers)) {
    let hasAgent = false;
    let hasType = false;
    for (let i = 0; i < headers.length; i += 2) {
      if (headers[i] === "user-agent") hasAgent = true;
      else if (headers[i] === "content-type") hasType = true;
    }
    const pairs = hasAgent ? [] : ["user-agent", userAgent];
    if (!hasType) pairs.push("content-type", "application/json");
    return pairs.length === 0 ? [...headers] : [...pairs, ...headers];
  }
  const merged: Record<string, string> = { "user-agent": userAgent, "content-type": "application/json" };
  for (const name in headers) merged[name.toLowerCase()] = headers[name]!;
  const pairs: string[] = [];
  for (const name in merged) pairs.push(name, merged[name]!);
  return pairs;
}

function isPairs(headers: Record<string, string> | readonly string[]): headers is readonly string[] {
  return Array.isArray(headers);
}

function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) flat[name.toLowerCase()] = first;
  }
  return flat;
}

/** Origin and path of each webhook URL, parsed once (endpoints are few; requests are many). */
class TargetCache {
  readonly #parsed = new Map<string, { origin: string; path: string }>();

  get(url: string): { origin: string; path: string } {
    let target = this.#parsed.get(url);
    if (!target) {
      const parsed = new URL(url);
      target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
      if (this.#parsed.size >= 10_000) this.#parsed.clear();
      this.#parsed.set(url, target);
    }
    return target;
  }
}

/**
 * One request/response on undici's dispatch API: no streams, no AbortSignal. It keeps the first
 * `maxResponseBytes` of the body as the snippet, then drains a bounded amount more so the socket can
 * be reused (beyond that it aborts, which closes the socket). One timer enforces the deadline for the
 * whole exchange; the outcome settles exactly once.
 */
class Exchange implements Dispatcher.DispatchHandler {
  readonly #started = performance.now();
  readonly #options: HttpSenderOptions;
  #settle: ((outcome: HttpOutcome) => void) | null;
  #controller: Dispatcher.DispatchController | null = null;
  readonly #timer: TimerHandle;
  #status = 0;
  #headers: Record<string, string> = {};
  readonly #kept: Buffer[] = [];
  #keptBytes = 0;
  #readBytes = 0;

  constructor(options: HttpSenderOptions, settle: (outcome: HttpOutcome) => void) {
    this.#options = options;
    this.#settle = settle;
    // A network deadline runs on real time: no ManualClock can move a socket along.
    this.#timer = systemClock.setTimer(() => this.#timeout(), options.timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    // The deadline passed while the request waited for a connection: never send it.
    if (this.#settle === null) controller.abort(new Error("timed out"));
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    this.#status = statusCode;
    this.#headers = flattenHeaders(headers);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const max = this.#options.maxResponseBytes;
    this.#readBytes += chunk.length;
    if (this.#keptBytes < max) {
      const part = chunk.subarray(0, max - this.#keptBytes);
      this.#kept.push(part);
      this.#keptBytes += part.length;
    }
    if (this.#readBytes > max + DRAIN_LIMIT_BYTES) {
      // Enough of this body: answer with the snippet and drop the connection rather than read on.
      this.#respond();
      controller.abort(new Error("response body too large to drain"));
    }
  }

  onResponseEnd(): void {
    this.#respond();
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error): void {
    // Once the snippet is complete, a failure while draining no longer changes the outcome.
    if (this.#status !== 0 && this.#keptBytes >= this.#options.maxResponseBytes) this.#respond();
    else this.#finish({ kind: "error", ...mapHttpError(error), latencyMs: this.#elapsed() });
  }

  #respond(): void {
    const kept = this.#kept;
    // Most receivers answer with an empty or one-chunk body: no concatenation then.
    const bodySnippet =
      kept.length === 0
        ? ""
        : kept.length === 1
          ? kept[0]!.toString("utf8")
          : Buffer.concat(kept).toString("utf8");
    this.#finish({
      kind: "response",
      status: this.#status,
      headers: this.#headers,
      bodySnippet,
      latencyMs: this.#elapsed(),
    });
  }

  #timeout(): void {
    const message = `The receiver did not send a complete response within ${this.#options.timeoutMs} ms.`;
    this.#finish({ kind: "error", code: "TIMEOUT", message, latencyMs: this.#elapsed() });
    this.#controller?.abort(new Error("timed out"));
  }

  #finish(outcome: HttpOutcome): void {
    const settle = this.#settle;
    if (settle === null) return;
    this.#settle = null;
    this.#timer.cancel();
    settle(outcome);
  }

  #elapsed(): number {
    return Math.round(performance.now() - this.#started);
  }
}
