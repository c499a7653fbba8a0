import type { HeadersLike } from "../headers.js";
import { bodyAlreadyParsed } from "./errors.js";
import type { GateResponse, RequestRead } from "./gate-types.js";
import { chunksOf, payloadTooLarge, readLimited } from "./read-body.js";
import { type EventOf, errorResponse, type InboundSources, type Receiver } from "./receiver.js";

/** Options of `readRequest()`. */
export interface ReadRequestOptions {
  /**
   * The headers to verify, when the runtime has better ones than `request.headers` (whose copies of
   * a repeated header are joined with ", "): e.g. `distinctHeaders(nodeRequest)` on a Node server.
   */
  headers?: HeadersLike;
  /** What the BODY_ALREADY_PARSED answer tells the developer to do, in their framework's words. */
  fix?: string;
}

/** Options of `handleRequest()`. */
export interface HandleRequestOptions extends ReadRequestOptions {
  /** Called with what the handler threw (the gate has answered 500 HANDLER_FAILED). Default: `console.error`. */
  onError?: (error: unknown) => void;
}

const FIX =
  "Pass the Request to the gate untouched: don't call request.json(), request.text(), request.formData() " +
  "or request.arrayBuffer() before it (read request.clone() if other code needs the body); the verified " +
  "payload is event.payload.";

/**
 * Reads a fetch `Request` for the gate: checks that `source` exists, refuses a body something else
 * already read (BODY_ALREADY_PARSED) and one over the source's `maxBodyBytes` (413, from its
 * `content-length` before a byte is read, else as soon as the stream passes it), and returns the
 * exact bytes with the headers and URL. For adapters that run the handler through their framework;
 * `handleRequest()` does the whole gate.
 * @example
 * const read = await readRequest(receiver, "billing", c.req.raw, { fix: "Mount the gate before any body parser." });
 * const answer = read.response ?? (await receiver.handle("billing", read.request, handler));
 */
export async function readRequest<S extends InboundSources>(
  receiver: Receiver<S>,
  source: keyof S & string,
  request: Request,
  options: ReadRequestOptions = {},
): Promise<RequestRead> {
  try {
    const limit = receiver.maxBodyBytes(source);
    if (request.bodyUsed || request.body?.locked) throw bodyAlreadyParsed(options.fix ?? FIX);
    if (Number(request.headers.get("content-length")) > limit) throw payloadTooLarge(limit, source);
    const read = await readLimited(chunksOf(request.body), limit);
    if (read.kind === "aborted") return { response: errorResponse(read.error), aborted: true };
    if (read.kind === "too-large") throw payloadTooLarge(limit, source);
    return { request: { body: read.body, headers: options.headers ?? request.headers, url: request.url } };
  } catch (error) {
    return { response: errorResponse(error), aborted: false };
  }
}

/**
 * The receiving gate on any fetch runtime (Workers, Deno, Bun, Next's App Router, Node's own `Request`):
 * a `Request` in, a `Response` out. Reads the body as `readRequest()` does, verifies, deduplicates,
 * runs `handler` with the typed event, and answers with the gate's status, headers and JSON body.
 * Never throws.
 * @example
 * export default { fetch: (request: Request) => handleRequest(receiver, "billing", request, (event) => record(event.payload)) };
 */
export async function handleRequest<S extends InboundSources, K extends keyof S & string>(
  receiver: Receiver<S>,
  source: K,
  request: Request,
  handler: (event: EventOf<S, K>) => unknown,
  options: HandleRequestOptions = {},
): Promise<Response> {
  const read = await readRequest(receiver, source, request, options);
  const answer = read.response ?? (await receiver.handle(source, read.request, handler));
  if ("error" in answer) (options.onError ?? console.error)(answer.error);
  return toResponse(answer);
}

function toResponse(answer: GateResponse): Response {
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}
