import type { IncomingHttpHeaders } from "node:http";
import { Agent, type Dispatcher } from "undici";
import type { HttpOutcome } from "../classify-response.js";
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
  /** Sends one POST. Never throws: failures come back as `{ kind: "error", code }`. Redirects are not followed. */
  post(url: string, headers: Record<string, string>, body: Uint8Array): Promise<HttpOutcome>;
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

  async function post(url: string, headers: Record<string, string>, body: Uint8Array): Promise<HttpOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const signal = AbortSignal.timeout(options.timeoutMs);
    try {
      const target = new URL(url);
      const response = await agent.request({
        origin: target.origin,
        path: `${target.pathname}${target.search}`,
        method: "POST",
        headers: requestHeaders(headers, options.userAgent),
        body,
        signal,
      });
      const bodySnippet = await readSnippet(response.body, options.maxResponseBytes);
      const responseHeaders = flattenHeaders(response.headers);
      return {
        kind: "response",
        status: response.statusCode,
        headers: responseHeaders,
        bodySnippet,
        latencyMs: elapsed(),
      };
    } catch (error) {
      if (signal.aborted) {
        const message = `The receiver did not send a complete response within ${options.timeoutMs} ms.`;
        return { kind: "error", code: "TIMEOUT", message, latencyMs: elapsed() };
      }
      return { kind: "error", ...mapHttpError(error), latencyMs: elapsed() };
    }
  }

  return { post, close: () => agent.close() };
}

function requestHeaders(headers: Record<string, string>, userAgent: string): Record<string, string> {
  const merged: Record<string, string> = { "user-agent": userAgent, "content-type": "application/json" };
  for (const [name, value] of Object.entries(headers)) merged[name.toLowerCase()] = value;
  return merged;
}

function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) flat[name.toLowerCase()] = first;
  }
  return flat;
}

/**
 * Keeps the first `maxBytes` of the body, then drains a bounded amount more so the socket can be
 * reused. Leaving the loop early destroys the body and with it the socket. Once the snippet is
 * complete, a failure while draining no longer changes the outcome.
 */
async function readSnippet(body: Dispatcher.ResponseData["body"], maxBytes: number): Promise<string> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let readBytes = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      readBytes += chunk.length;
      if (keptBytes < maxBytes) {
        const part = chunk.subarray(0, maxBytes - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      }
      if (readBytes > maxBytes + DRAIN_LIMIT_BYTES) break;
    }
  } catch (error) {
    if (keptBytes < maxBytes) throw error;
  }
  return Buffer.concat(kept).toString("utf8");
}
