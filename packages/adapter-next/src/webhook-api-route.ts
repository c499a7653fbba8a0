import type { IncomingMessage, ServerResponse } from "node:http";
import {
  bodyAlreadyParsed,
  distinctHeaders,
  type EventOf,
  errorResponse,
  type GateResponse,
  type InboundSources,
  payloadTooLarge,
  readBody,
  type Receiver,
} from "@postel/signing/inbound";
import type { NextWebhookOptions, RouteWebhookHandler } from "./webhook-route.js";

/** The request a Pages Router API route gets: Node's, plus the `body` Next's parser may have set. */
export type ApiRouteRequest = IncomingMessage & { body?: unknown };

const FIX =
  "Turn off Next's body parser for this route, so the raw bytes reach the gate: " +
  "export const config = { api: { bodyParser: false } };";

/**
 * A Pages Router API route that verifies a webhook over the exact request bytes, runs `handler` with
 * the typed event, and answers with the gate's response. The route must turn Next's body parser off.
 * A header sent more than once reaches the verifier copy by copy (identical copies count once;
 * disagreeing ones are answered 400 MALFORMED_HEADER).
 * @example
 * // pages/api/webhooks/billing.ts
 * export const config = { api: { bodyParser: false } };
 * export default webhookApiRoute(receiver, "billing", (event) => orders.apply(event.payload));
 */
export function webhookApiRoute<S extends InboundSources, K extends keyof S & string>(
  receiver: Receiver<S>,
  source: K,
  handler: RouteWebhookHandler<EventOf<S, K>, ApiRouteRequest>,
  options: NextWebhookOptions = {},
): (req: ApiRouteRequest, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const body = await readRequestBody(req, receiver, source);
    const response =
      body instanceof Uint8Array
        ? await receiver.handle(
            source,
            { body, headers: distinctHeaders(req), ...absoluteUrl(req) },
            (event) => handler(event, req),
          )
        : body;
    if ("error" in response) (options.onError ?? console.error)(response.error);
    res.writeHead(response.status, response.headers).end(response.body);
  };
}

async function readRequestBody<S extends InboundSources>(
  req: ApiRouteRequest,
  receiver: Receiver<S>,
  source: keyof S & string,
): Promise<Uint8Array | GateResponse> {
  try {
    const limit = receiver.maxBodyBytes(source);
    if (Number(req.headers["content-length"]) > limit) throw payloadTooLarge(limit, source);
    // Next's default parser leaves `req.body` set (even to "" for an empty body); other code that read
    // the stream leaves `readableDidRead`.
    if (req.body !== undefined || req.readableDidRead) throw bodyAlreadyParsed(FIX);
    const body = await readBody(req, limit);
    if (!body) throw payloadTooLarge(limit, source);
    return body;
  } catch (error) {
    return errorResponse(error);
  }
}

// Verifiers that sign the URL (Twilio) need it absolute. Next's server sets x-forwarded-proto; a bare
// http.Server is plain HTTP unless the socket is TLS.
function absoluteUrl(req: ApiRouteRequest): { url?: string } {
  const host = req.headers.host;
  if (!host || !req.url) return {};
  const forwarded = req.headers["x-forwarded-proto"];
  const proto = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(",")[0]?.trim();
  return { url: `${proto || ("encrypted" in req.socket ? "https" : "http")}://${host}${req.url}` };
}
