import type { IncomingMessage, ServerResponse } from "node:http";
import { type EventOf, handleNodeRequest, type InboundSources, type Receiver } from "@postel/signing/inbound";
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
  const gateOptions = { fix: FIX, ...(options.onError && { onError: options.onError }) };
  return async (req, res) => {
    // Written even when the client went away mid-body: Next warns about a route that sends nothing.
    const answer = await handleNodeRequest(
      receiver,
      source,
      req,
      (event) => handler(event, req),
      gateOptions,
    );
    res.writeHead(answer.status, answer.headers).end(answer.body);
  };
}
