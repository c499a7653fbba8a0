import { type EventOf, handleRequest, type InboundSources, type Receiver } from "@postel/signing/inbound";

/** Handles one verified webhook in a route; throwing releases the dedup record for the sender's retry. */
export type RouteWebhookHandler<TEvent, TRequest> = (event: TEvent, request: TRequest) => unknown;

/** Options shared by the Next.js gates. */
export interface NextWebhookOptions {
  /**
   * Called with what the handler threw: the gate answers 500 itself, so Next never sees the error.
   * Defaults to `console.error`.
   */
  onError?: (error: unknown) => void;
}

const FIX =
  "Pass the route's Request to webhookRoute() untouched: don't call request.json(), request.text() or " +
  "request.formData() before it (read request.clone() if other code needs the body); the verified " +
  "payload is event.payload.";

/**
 * An App Router route handler that verifies a webhook over the exact request bytes, runs `handler`
 * with the typed event, and answers with the gate's response.
 *
 * A route handler gets a fetch `Request`, whose `Headers` hold a header sent more than once already
 * joined with ", " (Next builds them from Node's joined `headers`; the separate copies are not
 * reachable). So a repeated `webhook-id` or `webhook-timestamp` is refused (401 or 400) rather than
 * collapsed when the copies are identical, and never accepted; repeated `webhook-signature` headers
 * still verify. `webhookApiRoute()` (Pages Router) sees each copy.
 * @example
 * // app/api/webhooks/billing/route.ts
 * export const POST = webhookRoute(receiver, "billing", (event) => orders.apply(event.payload));
 */
export function webhookRoute<S extends InboundSources, K extends keyof S & string>(
  receiver: Receiver<S>,
  source: K,
  handler: RouteWebhookHandler<EventOf<S, K>, Request>,
  options: NextWebhookOptions = {},
): (request: Request) => Promise<Response> {
  const gateOptions = { fix: FIX, ...(options.onError && { onError: options.onError }) };
  return (request) =>
    handleRequest(receiver, source, request, (event) => handler(event, request), gateOptions);
}
