import { distinctHeaders } from "./distinct-headers.js";
import { bodyAlreadyParsed } from "./errors.js";
import type { GateResponse, RequestRead } from "./gate-types.js";
import { payloadTooLarge, readLimited } from "./read-body.js";
import { type EventOf, errorResponse, type InboundSources, type Receiver } from "./receiver.js";

/**
 * What the gate reads of a Node request: an `IncomingMessage`, an HTTP/2 `Http2ServerRequest`, or a
 * framework's request built on them (Express, Next's API routes). Typed by shape, so this module
 * loads no `node:` module and bundles for any platform.
 */
export interface NodeRequestLike extends AsyncIterable<Uint8Array> {
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** Every header line as received, so a repeated header reaches the verifier copy by copy. */
  readonly rawHeaders: readonly string[];
  /** The path and query, as Node has it. */
  readonly url?: string | undefined;
  /** Set by a body parser: raw bytes (`express.raw()`) are used, anything else means the bytes are gone. */
  readonly body?: unknown;
  readonly readableDidRead?: boolean;
  readonly readableEnded?: boolean;
  readonly socket?: object | null;
}

/** Options of `readNodeRequest()`. */
export interface ReadNodeRequestOptions {
  /**
   * The absolute URL the request was sent to (URL-signing schemes such as Twilio's verify it).
   * Default: from the `host` header, `x-forwarded-proto` (else whether the socket is TLS) and `url`.
   */
  url?: string;
  /** What the BODY_ALREADY_PARSED answer tells the developer to do, in their framework's words. */
  fix?: string;
}

/** Options of `handleNodeRequest()`. */
export interface HandleNodeRequestOptions extends ReadNodeRequestOptions {
  /** Called with what the handler threw (the gate has answered 500 HANDLER_FAILED). Default: `console.error`. */
  onError?: (error: unknown) => void;
}

/** The gate's answer to a Node request; `aborted` when the client went away mid-body and nobody is left to read it. */
export type NodeGateResponse = GateResponse & { aborted?: boolean };

const FIX =
  "Mount the webhook route before any body parser (JSON, urlencoded, text), so the raw bytes reach the gate.";

/**
 * Reads a Node request for the gate: checks that `source` exists, refuses a body a parser already
 * read (BODY_ALREADY_PARSED; raw bytes a raw parser left in `body` are used as they are) and one
 * over the source's `maxBodyBytes` (413, from its `content-length` before a byte is read, else as
 * soon as the stream passes it, draining the rest), and returns the exact bytes with every copy of
 * each header and the absolute URL. For adapters that write the answer through their framework.
 * @example
 * const read = await readNodeRequest(receiver, "billing", req, { fix: "Turn the body parser off." });
 * const answer = read.response ?? (await receiver.handle("billing", read.request, handler));
 */
export async function readNodeRequest<S extends InboundSources>(
  receiver: Receiver<S>,
  source: keyof S & string,
  req: NodeRequestLike,
  options: ReadNodeRequestOptions = {},
): Promise<RequestRead> {
  try {
    const limit = receiver.maxBodyBytes(source);
    const url = options.url ?? absoluteUrl(req);
    const request = { headers: distinctHeaders(req), ...(url !== undefined && { url }) };
    if (req.body instanceof Uint8Array) {
      if (req.body.byteLength > limit) throw payloadTooLarge(limit, source);
      return { request: { ...request, body: req.body } };
    }
    // body-parser 1.x sets `req.body = {}` without reading a body whose content type it skips;
    // Next's parser sets it even to "" for an empty body; code that read the stream leaves the flags.
    const parsed = req.body !== undefined && !isEmptyObject(req.body);
    if (parsed || req.readableDidRead || req.readableEnded) throw bodyAlreadyParsed(options.fix ?? FIX);
    if (Number(first(req.headers["content-length"])) > limit) throw payloadTooLarge(limit, source);
    const read = await readLimited(req[Symbol.asyncIterator](), limit);
    if (read.kind === "aborted") return { response: errorResponse(read.error), aborted: true };
    if (read.kind === "too-large") throw payloadTooLarge(limit, source);
    return { request: { ...request, body: read.body } };
  } catch (error) {
    return { response: errorResponse(error), aborted: false };
  }
}

/**
 * The receiving gate for a Node request: reads it as `readNodeRequest()` does, verifies,
 * deduplicates and runs `handler` with the typed event. Returns the answer for the framework to
 * write (`res.writeHead(answer.status, answer.headers).end(answer.body)`); never throws.
 * @example
 * createServer(async (req, res) => {
 *   const answer = await handleNodeRequest(receiver, "billing", req, (event) => record(event.payload));
 *   res.writeHead(answer.status, answer.headers).end(answer.body);
 * });
 */
export async function handleNodeRequest<S extends InboundSources, K extends keyof S & string>(
  receiver: Receiver<S>,
  source: K,
  req: NodeRequestLike,
  handler: (event: EventOf<S, K>) => unknown,
  options: HandleNodeRequestOptions = {},
): Promise<NodeGateResponse> {
  const read = await readNodeRequest(receiver, source, req, options);
  if (read.response) return read.aborted ? { ...read.response, aborted: true } : read.response;
  const answer = await receiver.handle(source, read.request, handler);
  if ("error" in answer) (options.onError ?? console.error)(answer.error);
  return answer;
}

// Verifiers that sign the URL (Twilio) need it absolute. A proxy in front sets x-forwarded-proto;
// a bare server is plain HTTP unless the socket is TLS (only a TLS socket has `encrypted`).
function absoluteUrl(req: NodeRequestLike): string | undefined {
  const host = first(req.headers["host"]) ?? first(req.headers[":authority"]);
  if (!host || !req.url) return undefined;
  const proto = first(req.headers["x-forwarded-proto"])?.split(",")[0]?.trim();
  const tls = typeof req.socket === "object" && req.socket !== null && "encrypted" in req.socket;
  return `${proto || (tls ? "https" : "http")}://${host}${req.url}`;
}

function first(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === "string" ? value : value?.[0];
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === "object" && value !== null && Object.keys(value).length === 0;
}
