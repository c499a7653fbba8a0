import {
  bodyAlreadyParsed,
  distinctHeaders,
  type EventOf,
  errorResponse,
  type GateResponse,
  InboundError,
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
  const limit = receiver.maxBodyBytes(source);
  const onError =
    options.onError ?? ((error) => console.error(`[postel] webhook handler of "${source}" failed:`, error));
  const gate = async (req: Request, res: Response): Promise<void> => {
    const body = await receiveBody(req, source, limit);
    // The client went away mid-body: nobody is left to answer, and logging it would let anyone
    // write a stack trace to the app's logs per request.
    if (body === ABORTED) return;
    const url = `${req.protocol}://${req.get("host")}${req.originalUrl}`;
    const response =
      body instanceof InboundError
        ? errorResponse(body)
        : await receiver.handle(source, { body, headers: distinctHeaders(req), url }, (event) => {
            res.locals["webhook"] = event;
            return handler(event, req, res);
          });
    if (response.error !== undefined) onError(response.error, req);
    if (!res.headersSent) send(res, response);
  };
  // Only a bug (an onError that throws, a header Express refuses) gets here: Express reports it.
  return (req, res, next) => void gate(req, res).catch(next);
}

const ABORTED = Symbol("aborted");

function send(res: Response, response: GateResponse): void {
  // A refusal before the body was read leaves bytes on the socket: close it rather than drain them.
  if (response.status === 413) res.set("connection", "close");
  res.status(response.status).set(response.headers).send(response.body);
}

/**
 * The exact bytes: a Buffer left by `express.raw()`, else read from the stream, stopping past `limit`.
 * Resolves an InboundError for the refusals the gate answers (too large, already parsed), and
 * ABORTED when the stream broke or closed before its end (the client went away).
 */
function receiveBody(
  req: Request,
  source: string,
  limit: number,
): Promise<Uint8Array | InboundError | typeof ABORTED> {
  const tooLarge = () =>
    new InboundError(
      "PAYLOAD_TOO_LARGE",
      `The body is larger than ${limit} bytes, the limit of source "${source}".`,
    );
  if (Buffer.isBuffer(req.body)) return Promise.resolve(req.body);
  // body-parser 1.x sets `req.body = {}` without reading a body whose content type it skips.
  const parsed = req.body !== undefined && !(isObject(req.body) && Object.keys(req.body).length === 0);
  if (parsed || req.readableDidRead || req.readableEnded) return Promise.resolve(bodyAlreadyParsed(FIX));
  if (Number(req.headers["content-length"]) > limit) return Promise.resolve(tooLarge());

  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      chunks.push(chunk);
      if (size > limit) {
        stop();
        req.pause();
        resolve(tooLarge());
      }
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks, size));
    };
    const onAbort = () => {
      stop();
      resolve(ABORTED);
    };
    const stop = () => req.off("data", onData).off("end", onEnd).off("error", onAbort).off("close", onAbort);
    req.on("data", onData).on("end", onEnd).on("error", onAbort).on("close", onAbort);
  });
}

const isObject = (value: unknown): value is object => typeof value === "object" && value !== null;
