import {
  bodyAlreadyParsed,
  distinctHeaders,
  errorResponse,
  type GateResponse,
  type InboundSourceOptions,
  type Receiver,
  type StandardSchemaV1,
  type VerifiedEvent,
} from "@postel/signing/inbound";
import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from "fastify";

declare module "fastify" {
  interface FastifyRequest {
    /** The verified webhook, on routes served by Postel's gate. */
    webhook?: VerifiedEvent;
  }
}

/** Named inbound sources, as `Receiver({ sources })` takes them. */
export type Sources = Record<string, InboundSourceOptions<unknown>>;

/** The payload type of source `K`: its schema's output, else `unknown`. */
export type PayloadOf<S extends Sources, K extends keyof S> = S[K] extends {
  schema: StandardSchemaV1<unknown, infer O>;
}
  ? O
  : unknown;

/**
 * Handles one verified webhook. Return normally for a 200; throw for a 500 that the sender retries
 * (the dedup record is released). Sending a reply yourself (e.g. TwiML) is allowed: the gate then sends nothing.
 */
export type FastifyWebhookHandler<TPayload = unknown> = (
  event: VerifiedEvent<TPayload>,
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
export function webhookHandler<S extends Sources, K extends keyof S & string>(
  receiver: Receiver<S>,
  source: K,
  handler: FastifyWebhookHandler<PayloadOf<S, K>>,
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
            return handler(event as VerifiedEvent<PayloadOf<S, K>>, request, reply);
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
