import {
  bodyAlreadyParsed,
  distinctHeaders,
  type EventOf,
  errorResponse,
  type GateResponse,
  type InboundRequest,
  type InboundSources,
  type Receiver,
  type RequestRead,
  readRequest,
} from "@postel/signing/inbound";
import type { Context, Env, MiddlewareHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** The Hono `Env` fragment `webhook()` adds: the verified event as `c.get("webhook")`. */
export type WebhookEnv<TEvent> = { Variables: { webhook: TEvent } };

/** Handles one verified webhook inside the gate; throwing releases the dedup record for the sender's retry. */
export type HonoWebhookHandler<TEvent, E extends Env = Env> = (
  event: TEvent,
  c: Context<E & WebhookEnv<TEvent>>,
) => unknown;

/** Options of `webhook()`. */
export interface HonoWebhookOptions {
  /**
   * Called with what the handler threw: the gate answers 500 itself, so Hono's `onError` never sees
   * it (it is also set on `c.error`). Defaults to `console.error`, as Hono's default error handler.
   */
  onError?: (error: unknown) => void;
}

const FIX =
  "Mount webhook() before any middleware or validator that reads the body (c.req.json(), c.req.text(), " +
  'c.req.parseBody(), validator("json")): it needs the raw bytes, and hands you the parsed payload as ' +
  'c.get("webhook").payload (give the source a `schema` to validate it).';

/**
 * Hono middleware that verifies a webhook over the exact received bytes and runs `handler` with the
 * typed event, then answers with the gate's response. Without a `handler`, the route's next handler
 * is the webhook handler: it reads `c.get("webhook")` and its answer is sent; if it throws or answers
 * non-2xx, the dedup record is released so the sender's retry runs it again.
 *
 * A header sent more than once reaches the verifier copy by copy on `@hono/node-server`, which
 * passes the Node request as `c.env.incoming` (identical copies count once; disagreeing ones are
 * answered 400 MALFORMED_HEADER). Other runtimes hand Hono fetch `Headers`, whose copies are already
 * joined with ", ": there a repeated `webhook-id` or `webhook-timestamp` is refused (401 or 400)
 * rather than collapsed, never accepted, and repeated `webhook-signature` headers still verify.
 * @example
 * app.post("/webhooks/billing", webhook(receiver, "billing", (event) => orders.apply(event.payload)));
 */
export function webhook<S extends InboundSources, K extends keyof S & string, E extends Env = Env>(
  receiver: Receiver<S>,
  source: K,
  handler?: HonoWebhookHandler<EventOf<S, K>, E>,
  options: HonoWebhookOptions = {},
): MiddlewareHandler<E & WebhookEnv<EventOf<S, K>>> {
  return async (c, next) => {
    const read = await readHonoRequest(c, receiver, source);
    if (read.response) return send(c, read.response);
    let routeAnswered = false;
    const response = await receiver.handle(source, read.request, async (event) => {
      c.set("webhook", event);
      if (handler) return handler(event, c);
      await next();
      routeAnswered = c.finalized;
      if (c.error) throw c.error;
      if (routeAnswered && !c.res.ok) throw new Error(`The route's handler answered ${c.res.status}.`);
    });
    // The route's handler answered (through Hono's onError, if it threw): its response stands.
    if (routeAnswered) return;
    if ("error" in response) {
      if (response.error instanceof Error) c.error = response.error;
      (options.onError ?? console.error)(response.error);
    }
    return send(c, response);
  };
}

// On @hono/node-server the env is the Node request and response: its raw headers keep each copy.
function requestHeaders(c: Context): InboundRequest["headers"] {
  const incoming = (c.env as { incoming?: { rawHeaders?: unknown } } | undefined)?.incoming;
  return incoming && Array.isArray(incoming.rawHeaders)
    ? distinctHeaders(incoming as { rawHeaders: string[] })
    : c.req.raw.headers;
}

function send(c: Context, response: GateResponse): Response {
  return c.body(response.body, response.status as ContentfulStatusCode, response.headers);
}

// The gate reads the body (limit, "already parsed", 413); Hono's own part is its body cache.
async function readHonoRequest<S extends InboundSources>(
  c: Context,
  receiver: Receiver<S>,
  source: keyof S & string,
): Promise<RequestRead> {
  const headers = requestHeaders(c);
  // Hono caches each body read in `bodyCache`: raw bytes are only there under `arrayBuffer` (and only
  // if that was the first read); `text`/`json`/`formData` were decoded, so the signed bytes are gone.
  const cache = c.req.bodyCache;
  try {
    if (cache.arrayBuffer)
      return { request: { body: new Uint8Array(await cache.arrayBuffer), headers, url: c.req.url } };
    if (Object.keys(cache).length > 0) throw bodyAlreadyParsed(FIX);
  } catch (error) {
    return { response: errorResponse(error), aborted: false };
  }
  const read = await readRequest(receiver, source, c.req.raw, { headers, fix: FIX });
  // Later code may still call c.req.json() and friends; Hono stores promises here.
  if (read.request) Object.assign(cache, { arrayBuffer: Promise.resolve(read.request.body.buffer) });
  return read;
}
