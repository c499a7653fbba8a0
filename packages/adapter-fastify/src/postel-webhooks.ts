import {
  type EventOf,
  errorResponse,
  type InboundSources,
  type PayloadOf,
  payloadTooLarge,
  type Receiver,
} from "@postel/signing/inbound";
import type { FastifyError, FastifyPluginAsync } from "fastify";
import { type FastifyWebhookHandler, send, webhookHandler } from "./webhook-handler.js";

/** One webhook route: where it listens, which source verifies it, what runs once it is verified. */
export type WebhookRoute<S extends InboundSources> = {
  [K in keyof S & string]: {
    url: string;
    source: K;
    handler: FastifyWebhookHandler<PayloadOf<S, K>, EventOf<S, K>>;
  };
}[keyof S & string];

/** Options of a `postelWebhooks(receiver)` plugin (Fastify's own `prefix` applies too). */
export interface PostelWebhooksOptions<S extends InboundSources = InboundSources> {
  routes: readonly WebhookRoute<S>[];
}

/**
 * A Fastify plugin serving webhook routes of `receiver` in their own encapsulated scope: every content
 * type is read as a raw Buffer (limited to the source's `maxBodyBytes`), so the app's JSON parser
 * elsewhere is untouched. Built from the receiver so each route's source and payload are typed.
 * A header sent more than once reaches the verifier copy by copy (identical copies count once;
 * disagreeing ones are answered 400 MALFORMED_HEADER); a client that goes away mid-body is dropped
 * without a log entry.
 * @example
 * app.register(postelWebhooks(receiver), { routes: [{ url: "/webhooks/billing", source: "billing", handler }] });
 */
export function postelWebhooks<S extends InboundSources>(
  receiver: Receiver<S>,
): FastifyPluginAsync<PostelWebhooksOptions<S>> {
  return async (scope, { routes }) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));
    scope.decorateRequest("webhook", undefined);
    for (const route of routes) {
      const limit = receiver.maxBodyBytes(route.source);
      const tooLarge = payloadTooLarge(limit, route.source);
      scope.post(route.url, {
        bodyLimit: limit,
        handler: webhookHandler(receiver, route.source, route.handler),
        // Fastify's body limit answers in the gate's shape; anything else is Fastify's to report.
        errorHandler: (error: FastifyError, request, reply) => {
          if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") return send(reply, errorResponse(tooLarge));
          // The client went away mid-body: nobody is left to answer, and passing the error on
          // would log it with its stack (at error level, behind many apps' error handlers) for a
          // request anyone can make.
          if (!request.raw.complete) return reply.code(400).send();
          throw error;
        },
      });
    }
  };
}
