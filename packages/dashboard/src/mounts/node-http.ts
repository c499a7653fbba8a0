import type { IncomingMessage, ServerResponse } from "node:http";

/** The dashboard's forms are small: a larger body is refused before it is read. */
const MAX_BODY_BYTES = 1024 * 1024;

/**
 * A Web `Request` for a Node request. `url` is the full URL; `body` is a body a framework already
 * read (a Buffer, a string or a parsed urlencoded object), else the stream is read here.
 */
export async function toWebRequest(req: IncomingMessage, url: string, body?: unknown): Promise<Request> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const method = req.method ?? "GET";
  if (method === "GET" || method === "HEAD") return new Request(url, { method, headers });
  return new Request(url, { method, headers, body: await bodyOf(req, body) });
}

async function bodyOf(req: IncomingMessage, parsed: unknown): Promise<Uint8Array<ArrayBuffer> | string> {
  if (Buffer.isBuffer(parsed)) return new Uint8Array(parsed);
  if (typeof parsed === "string") return parsed;
  if (parsed !== null && typeof parsed === "object" && Object.keys(parsed).length > 0) {
    // express.urlencoded() ran first: the dashboard's fields are flat strings or lists of strings.
    const form = new URLSearchParams();
    for (const [name, value] of Object.entries(parsed))
      for (const one of Array.isArray(value) ? value : [value]) form.append(name, String(one));
    return form.toString();
  }
  if (req.readableEnded) return "";
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) throw new Error("The dashboard's request body is larger than 1 MiB.");
    chunks.push(chunk);
  }
  return new Uint8Array(Buffer.concat(chunks));
}

/** Writes a Web `Response` (status, every header, each `set-cookie` on its own line, body) to a Node response. */
export async function writeWebResponse(res: ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status;
  for (const [name, value] of response.headers) if (name !== "set-cookie") res.setHeader(name, value);
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader("set-cookie", cookies);
  res.end(Buffer.from(await response.arrayBuffer()));
}
