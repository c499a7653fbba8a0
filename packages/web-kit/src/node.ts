/**
 * `@postel/web-kit/node`: the bridge between Node's `http` requests and Web `Request`/`Response`,
 * for the Express and Fastify mounts. It trusts neither the `Host` header nor the request target:
 * a URL is built only from a well-formed host and a path, and the body is streamed on demand, never
 * read before the handler asks for it.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

const LABEL = "[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?";
const HOST = new RegExp(`^(?:${LABEL}(?:\\.${LABEL})*\\.?|\\[[0-9A-Fa-f:.]{2,45}\\])(?::[0-9]{1,5})?$`);

/** Whether `host` is a host name, an IPv4 address or a bracketed IPv6 address, with an optional port. */
export function isWellFormedHost(host: string | undefined): host is string {
  if (host === undefined || !HOST.test(host)) return false;
  try {
    return new URL(`http://${host}/`).host !== "";
  } catch {
    return false;
  }
}

/**
 * The path and query of a request target: an origin-form target (`/a?b`) as it is, the path of an
 * absolute-form one (`http://host/a?b`), and null for anything else (`*`, an authority, garbage).
 */
export function pathOfTarget(target: string | undefined): string | null {
  if (target === undefined) return null;
  if (target.startsWith("/") && !target.startsWith("//")) return target;
  if (!/^https?:\/\//i.test(target)) return null;
  try {
    const url = new URL(target);
    return `${url.pathname}${url.search}`;
  } catch {
    return null;
  }
}

/** Where the mount found the request: the protocol it was served over and the target it routed. */
export interface NodeRequestSource {
  /** `"http"` or `"https"`, as the framework determined it (e.g. Express's `req.protocol`). */
  protocol: string;
  /** The host the client asked for (the framework's view of `Host`); refused unless well formed. */
  host: string | undefined;
  /** The request target the framework routed (e.g. `req.originalUrl`). */
  target: string | undefined;
  /** A body a framework already read (a Buffer, a string or a parsed urlencoded object), if any. */
  parsedBody?: unknown;
}

/**
 * A Web `Request` for a Node request, or null when its host or target cannot make a URL (answer
 * 400). The body is streamed from `req` only as the handler reads it.
 */
export function toWebRequest(req: IncomingMessage, source: NodeRequestSource): Request | null {
  const path = pathOfTarget(source.target);
  if (path === null || !isWellFormedHost(source.host)) return null;
  const protocol = source.protocol === "https" ? "https" : "http";
  const url = `${protocol}://${source.host}${path}`;
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const method = req.method ?? "GET";
  if (method === "GET" || method === "HEAD") return new Request(url, { method, headers });
  const body = alreadyRead(req, source.parsedBody) ?? lazyStream(req);
  return new Request(url, { method, headers, body, duplex: "half" } as RequestInit);
}

/**
 * A body a framework read before the mount ran, as the bytes the handler would have read; null
 * when the stream is still unread.
 */
function alreadyRead(req: IncomingMessage, parsed: unknown): Uint8Array | string | null {
  if (Buffer.isBuffer(parsed)) return new Uint8Array(parsed);
  if (typeof parsed === "string") return parsed;
  if (!req.readableEnded) return null;
  if (parsed === null || typeof parsed !== "object") return "";
  // express.json() ran first: the same document. express.urlencoded(): forms' fields are flat
  // strings or lists of strings.
  if (/json/i.test(req.headers["content-type"] ?? "")) return JSON.stringify(parsed);
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(parsed))
    for (const one of Array.isArray(value) ? value : [value]) form.append(name, String(one));
  return form.toString();
}

/** The request's bytes, read from the socket only when the consumer pulls (nothing is buffered ahead). */
function lazyStream(req: IncomingMessage): ReadableStream<Uint8Array> {
  let chunks: AsyncIterator<Buffer> | undefined;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        chunks ??= (req as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(new Uint8Array(next.value));
      },
      cancel() {
        // Discard the rest rather than destroy the socket the answer (a 413) still goes out on.
        req.resume();
      },
    },
    { highWaterMark: 0 },
  );
}

/** Writes a Web `Response` (status, every header, each `set-cookie` on its own line, body) to a Node response. */
export async function writeWebResponse(res: ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status;
  for (const [name, value] of response.headers) if (name !== "set-cookie") res.setHeader(name, value);
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader("set-cookie", cookies);
  res.end(Buffer.from(await response.arrayBuffer()));
}
