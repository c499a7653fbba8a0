import {
  bodyAlreadyParsed,
  type EventOf,
  errorResponse,
  type GateResponse,
  type InboundSources,
  payloadTooLarge,
  readBody,
  type Receiver,
} from "@postel/signing/inbound";

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
  return async (request) => {
    const body = await readRequestBody(request, receiver, source);
    const response =
      body instanceof Uint8Array
        ? await receiver.handle(source, { body, headers: request.headers, url: request.url }, (event) =>
            handler(event, request),
          )
        : body;
    if ("error" in response) (options.onError ?? console.error)(response.error);
    return new Response(response.body, { status: response.status, headers: response.headers });
  };
}

async function readRequestBody<S extends InboundSources>(
  request: Request,
  receiver: Receiver<S>,
  source: keyof S & string,
): Promise<Uint8Array | GateResponse> {
  try {
    const limit = receiver.maxBodyBytes(source);
    if (Number(request.headers.get("content-length")) > limit) throw payloadTooLarge(limit, source);
    if (request.bodyUsed) throw bodyAlreadyParsed(FIX);
    const body = await readBody(request.body, limit);
    if (!body) throw payloadTooLarge(limit, source);
    return body;
  } catch (error) {
    return errorResponse(error);
  }
}
