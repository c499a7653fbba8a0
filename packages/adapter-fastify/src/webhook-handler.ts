import {
  bodyAlreadyParsed,
  distinctHeaders,
  type EventOf,
  errorResponse,
  type GateResponse,
  type InboundSources,
  type PayloadOf,
  type Receiver,
  type VerifiedEvent,
} from "@postel/signing/inbound";
import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from "fastify";

declare module "fastify" {
  interface FastifyRequest {
    /** The verified webhook, on routes served by Postel's gate. */
    webhook?: VerifiedEvent;
  }
}

/**
 * Handles one verified webhook. Return normally for a 200; throw for a 500 that the sender retries
 * (the dedup record is released). Sending a reply yourself (e.g. TwiML) is allowed: the gate then sends nothing.
 * `TEvent` is the event it gets: routes pass `EventOf<S, K>` (for a source with `events`, a union
 * whose `type` narrows `data`).
 */
export type FastifyWebhookHandler<TPayload = unknown, TEvent = VerifiedEvent<TPayload>> = (
  event: TEvent,
  request: FastifyRequest,
  reply: FastifyReply,
) => unknown;

const FIX =
  "Register the route with app.register(postelWebhooks(receiver), { routes }), whose scope reads every content type " +
  "as a raw Buffer; on a plain route the app's JSON parser reads the body first and the signed bytes are gone.";

/**
 * A Fastify route handler running Postel's gate. It needs the body as a Buffer: use it through
 * `postelWebhooks`, or in a scope with a `parseAs: "buffer"` content-type parser for every type.
 */
export function webhookHandler<S extends InboundSources, K extends keyof S & string>(
  receiver: Receiver<S>,
  source: K,
  handler: FastifyWebhookHandler<PayloadOf<S, K>, EventOf<S, K>>,
): RouteHandlerMethod {
  receiver.maxBodyBytes(source); // throws UNKNOWN_SOURCE when the app starts, not on every request
  return async (request, reply) => {
    const body: unknown = request.body ?? Buffer.alloc(0);
    const response = Buffer.isBuffer(body)
      ? await receiver.handle(
          source,
          {
            body,
            // Each copy of a repeated header, from the raw request (HTTP/1 and HTTP/2 alike).
            headers: distinctHeaders(request.raw),
            url: `${request.protocol}://${request.host}${request.url}`,
          },
          (event) => {
            request.webhook = event;
            return handler(event, request, reply);
          },
        )
      : errorResponse(bodyAlreadyParsed(FIX));
    if (response.error !== undefined)
      request.log.error({ err: response.error }, `webhook handler of "${source}" failed`);
    return reply.sent ? reply : send(reply, response);
  };
}

/** Writes the gate's answer. */
export function send(reply: FastifyReply, response: GateResponse): FastifyReply {
  return reply.code(response.status).headers(response.headers).send(response.body);
}
