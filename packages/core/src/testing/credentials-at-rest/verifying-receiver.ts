import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { createVerifier } from "@postel/signing";

/**
 * A webhook receiver on 127.0.0.1 that verifies every request's signature with @postel/signing
 * against the secrets it was told for that path, answers 200 (or 401 when the signature is wrong),
 * and counts each path's `webhook-id`s.
 */
export interface VerifyingReceiver {
  url(path: string): string;
  /** Accept signatures made with `secret` on `path` (besides those given before). */
  trust(path: string, secret: string): void;
  /** How many times each `<path> <webhook-id>` arrived with a valid signature. */
  readonly received: Map<string, number>;
  /** Requests whose signature did not verify with any secret of their path. */
  readonly invalid: string[];
  /** Every request's headers, by path (the last one of each). */
  readonly lastHeaders: Map<string, Record<string, string | string[] | undefined>>;
  /** Valid requests so far. */
  count(): number;
  /** Resolves once `count()` reaches `n` (at once if it has); rejects after `ms` of real time. */
  reach(n: number, ms?: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts a verifying receiver on an ephemeral port. */
export async function startVerifyingReceiver(): Promise<VerifyingReceiver> {
  const secrets = new Map<string, string[]>();
  const received = new Map<string, number>();
  const invalid: string[] = [];
  const lastHeaders = new Map<string, Record<string, string | string[] | undefined>>();
  const sockets = new Set<Socket>();
  let valid = 0;
  let waiters: { n: number; resolve: () => void }[] = [];

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const path = req.url ?? "/";
      lastHeaders.set(path, req.headers);
      const id = String(req.headers["webhook-id"]);
      try {
        createVerifier(secrets.get(path) ?? []).verify(
          { body: Buffer.concat(chunks), headers: req.headers },
          Date.now(),
        );
      } catch (error) {
        invalid.push(`${path} ${id}: ${error instanceof Error ? error.message : String(error)}`);
        res.writeHead(401).end();
        return;
      }
      const key = `${path} ${id}`;
      received.set(key, (received.get(key) ?? 0) + 1);
      valid++;
      const due = waiters.filter((w) => valid >= w.n);
      waiters = waiters.filter((w) => valid < w.n);
      for (const waiter of due) waiter.resolve();
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    trust(path, secret) {
      secrets.set(path, [...(secrets.get(path) ?? []), secret]);
    },
    received,
    invalid,
    lastHeaders,
    count: () => valid,
    reach(n, ms = 60_000) {
      if (valid >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`the receiver got ${valid} of ${n} webhooks in ${ms} ms`)),
          ms,
        );
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
