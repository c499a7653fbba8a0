import {
  type EventOf,
  type GateResponse,
  handleNodeRequest,
  type InboundSources,
  type PayloadOf,
  type Receiver,
  type VerifiedEvent,
} from "@postel/signing/inbound";
import type { Request, RequestHandler, Response } from "express";

/**
 * Handles one verified webhook. Return normally for a 200; throw for a 500 that the sender retries
 * (the dedup record is released). Responding yourself (e.g. TwiML) is allowed: the gate then writes nothing.
 * `TEvent` is the event it gets: `webhook()` passes `EventOf<S, K>` (for a source with `events`, a
 * union whose `type` narrows `data`).
 */
export type ExpressWebhookHandler<TPayload = unknown, TEvent = VerifiedEvent<TPayload>> = (
  event: TEvent,
  req: Request,
  res: Response,
) => unknown;

/** Options of `webhook()`. */
export interface WebhookOptions {
  /**
   * Called with what the handler threw, after the 500 HANDLER_FAILED answer is sent (so Express's
   * `next(err)` would come too late). Default: `console.error`.
   */
  onError?: (error: unknown, req: Request) => void;
}

const FIX =
  "Mount webhook() before express.json() / express.urlencoded() / express.text(), or use express.raw({ type: '*/*' }) on this route.";

/**
 * An Express route handler that verifies webhooks of `source` over the exact received bytes, then
 * runs `handler` with the event (also set as `res.locals.webhook`): its `payload` typed by the
 * source's `schema` or, for a source with `events`, a union whose `event.type` narrows `event.data`.
 * A header sent more than once reaches the verifier copy by copy (identical copies count once;
 * disagreeing ones are answered 400 MALFORMED_HEADER), and a client that goes away mid-body is
 * dropped without a log line.
 * @example
 * app.post("/webhooks/billing", webhook(receiver, "billing", async (event) => { await record(event.payload); }));
 */
export function webhook<S extends InboundSources, K extends keyof S & string>(
  receiver: Receiver<S>,
  source: K,
  handler: ExpressWebhookHandler<PayloadOf<S, K>, EventOf<S, K>>,
  options: WebhookOptions = {},
): RequestHandler {
  // Resolved once, so a route for an unknown source fails when the app starts, not per request.
  receiver.maxBodyBytes(source);
  const onError =
    options.onError ?? ((error) => console.error(`[postel] webhook handler of "${source}" failed:`, error));
  const gate = async (req: Request, res: Response): Promise<void> => {
    const answer = await handleNodeRequest(
      receiver,
      source,
      req,
      (event) => {
        res.locals["webhook"] = event;
        return handler(event, req, res);
      },
      {
        url: `${req.protocol}://${req.get("host")}${req.originalUrl}`,
        fix: FIX,
        onError: (error) => onError(error, req),
      },
    );
    // The client went away mid-body: nobody is left to answer, and logging it would let anyone
    // write a stack trace to the app's logs per request. A handler that answered itself stands.
    if (answer.aborted || res.headersSent) return;
    send(res, answer);
  };
  // Only a bug (an onError that throws, a header Express refuses) gets here: Express reports it.
  return (req, res, next) => void gate(req, res).catch(next);
}

function send(res: Response, response: GateResponse): void {
  // A refused body may still be on the socket (unread behind a declared size, or being drained):
  // close the connection rather than read it all.
  if (response.status === 413) res.set("connection", "close");
  res.status(response.status).set(response.headers).send(response.body);
}
