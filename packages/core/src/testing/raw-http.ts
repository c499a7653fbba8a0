import { once } from "node:events";
import { type IncomingMessage, request, type Server } from "node:http";
import { connect } from "node:net";

/** The status and gate error code (`x-postel-error`) of a raw request. */
export interface RawResponse {
  status: number;
  code: string | undefined;
}

/**
 * POSTs `body` with `node:http`, which sends an array header value as one header line per copy,
 * as a proxy that repeats a header does (fetch would join the copies into one line).
 */
export function postRaw(
  url: string,
  headers: Record<string, string | string[]>,
  body: string,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers }, (res) => {
      const code = res.headers["x-postel-error"];
      res.resume().on("end", () => resolve({ status: res.statusCode!, code: code?.toString() }));
    });
    req.on("error", reject).end(body);
  });
}

/**
 * Sends the headers and half of `body` over a raw socket and, once `server` has the request,
 * destroys the socket, as a client that gives up mid-upload does. Resolves when the server has
 * seen the request close.
 */
export async function abortMidBody(
  server: Server,
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<void> {
  const arrived = once(server, "request") as Promise<[IncomingMessage]>;
  const { hostname, port, pathname, search } = new URL(url);
  const socket = connect(Number(port), hostname).on("error", () => {});
  const head = Object.entries({ ...headers, host: `${hostname}:${port}`, "content-length": body.length })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  socket.write(`POST ${pathname}${search} HTTP/1.1\r\n${head}\r\n${body.slice(0, body.length >> 1)}`);
  const [req] = await arrived;
  // Not events.once: its "error" listener would change what the request emits.
  const closed = new Promise((resolve) => req.once("close", resolve));
  socket.destroy();
  await closed;
}
