import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { HOSTILE } from "./hostile.js";

/** A real receiver on 127.0.0.1: `/ok` answers 200; `/broken` answers 500 with a hostile body until `fix()`. */
export interface TestReceiver {
  url(path: string): string;
  fix(): void;
  /** `webhook-id`s received on each path with a 2xx. */
  delivered: Map<string, string[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<TestReceiver> {
  let broken = true;
  const delivered = new Map<string, string[]>();
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const path = req.url ?? "/";
      if (path === "/broken" && broken) {
        res.writeHead(500, { "content-type": "text/html" }).end(HOSTILE.snippet);
        return;
      }
      delivered.set(path, [...(delivered.get(path) ?? []), String(req.headers["webhook-id"])]);
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    fix: () => {
      broken = false;
    },
    delivered,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
