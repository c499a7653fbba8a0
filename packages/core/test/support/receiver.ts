import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the receiver saw. */
export interface SeenRequest {
  path: string;
  headers: IncomingHttpHeaders;
  /** Names and values as received, alternating (duplicates kept). */
  rawHeaders: string[];
  body: Buffer;
}

/** How the receiver answers: a status (with optional headers/body), "reset" to kill the socket, or "hang". */
export type Reply =
  | number
  | { status: number; headers?: Record<string, string>; body?: string }
  | "reset"
  | "hang";

/** A real HTTP server on 127.0.0.1 that answers from a script and records every request. */
export interface Receiver {
  url: (path?: string) => string;
  requests: SeenRequest[];
  /** Requests seen on one path. */
  on(path: string): SeenRequest[];
  /** Replace the answer for a path: a fixed reply, or a function of the request index on that path. */
  script(path: string, reply: Reply | ((index: number) => Reply)): void;
  close(): Promise<void>;
}

/** Starts a scripted receiver; unscripted paths answer 200. */
export async function startReceiver(): Promise<Receiver> {
  const scripts = new Map<string, (index: number) => Reply>();
  const requests: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = req.url ?? "/";
      const index = requests.filter((r) => r.path === path).length;
      requests.push({ path, headers: req.headers, rawHeaders: req.rawHeaders, body: Buffer.concat(chunks) });
      const reply = scripts.get(path)?.(index) ?? 200;
      if (reply === "reset") return req.socket.destroy();
      if (reply === "hang") return;
      const { status, headers = {}, body = "ok" } = typeof reply === "number" ? { status: reply } : reply;
      res.writeHead(status, headers).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path = "/") => `http://127.0.0.1:${port}${path}`,
    requests,
    on: (path) => requests.filter((r) => r.path === path),
    script(path, reply) {
      scripts.set(path, typeof reply === "function" ? reply : () => reply);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
