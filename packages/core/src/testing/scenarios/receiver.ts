import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { performance } from "node:perf_hooks";

/** One request the receiver saw. */
export interface SeenRequest {
  path: string;
  headers: IncomingHttpHeaders;
  /** Names and values as received, alternating (duplicates kept). */
  rawHeaders: string[];
  body: Buffer;
  /** The `webhook-id` header, or null when absent. */
  webhookId: string | null;
  /** `performance.now()` when the request's headers arrived. */
  arrivedAt: number;
}

/**
 * How the receiver answers a request:
 * - a status, or `{ status, headers?, body? }`, answered at once; add `delayMs` to answer after that
 *   many real milliseconds;
 * - `"hang"`: read the request, never answer;
 * - `"trickle"`: send `200` and its headers, then one body byte per second, never finishing;
 * - `"reset"`: destroy the socket once the request is read.
 */
export type Reply =
  | number
  | { status: number; headers?: Record<string, string>; body?: string; delayMs?: number }
  | "hang"
  | "trickle"
  | "reset";

/** A real HTTP server on 127.0.0.1 that answers from a per-path script and records every request. */
export interface ScenarioReceiver {
  url(path?: string): string;
  /** Every request, in arrival order. */
  readonly requests: SeenRequest[];
  /** Requests seen on one path. */
  on(path: string): SeenRequest[];
  /** Replace the answer for a path: a fixed reply, or a function of the request's index on that path (the request is in `on(path)` already). */
  script(path: string, reply: Reply | ((index: number) => Reply)): void;
  /** Stops the server, destroying hung, trickling and delayed connections at once. */
  close(): Promise<void>;
}

/** Starts a scripted receiver on an ephemeral port; unscripted paths answer 200. */
export async function startScenarioReceiver(): Promise<ScenarioReceiver> {
  const scripts = new Map<string, (index: number) => Reply>();
  const requests: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const later = (fn: () => void, ms: number, repeat = false) => {
    const timer = repeat ? setInterval(fn, ms) : setTimeout(fn, ms);
    timers.add(timer);
    return timer;
  };

  const server: Server = createServer((req, res) => {
    const arrivedAt = performance.now();
    const path = req.url ?? "/";
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const index = requests.filter((r) => r.path === path).length;
      const id = req.headers["webhook-id"];
      // Recorded before the script runs, so a script can answer by what the request carries.
      requests.push({
        path,
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks),
        webhookId: typeof id === "string" ? id : null,
        arrivedAt,
      });
      const reply = scripts.get(path)?.(index) ?? 200;
      if (reply === "reset") return req.socket.destroy();
      if (reply === "hang") return;
      if (reply === "trickle") {
        res.writeHead(200, { "content-type": "text/plain" });
        res.flushHeaders();
        later(() => res.write("."), 1_000, true);
        return;
      }
      const {
        status,
        headers = {},
        body = "ok",
        delayMs = 0,
      } = typeof reply === "number" ? { status: reply } : reply;
      const answer = () => {
        if (!res.destroyed) res.writeHead(status, headers).end(body);
      };
      if (delayMs > 0) later(answer, delayMs);
      else answer();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
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
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
