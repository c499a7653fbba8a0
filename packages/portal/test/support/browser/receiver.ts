import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { HOSTILE } from "./hostile.js";

/** One request a receiver got. */
export interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A real receiver on 127.0.0.1: paths starting `/fail` answer 500 with hostile HTML, every other 200. */
export interface TestReceiver {
  url(path: string): string;
  /** Every request, in arrival order. */
  received: Received[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<TestReceiver> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      body += chunk;
    });
    req.on("end", () => {
      const path = req.url ?? "/";
      received.push({ path, headers: req.headers, body });
      if (path.startsWith("/fail")) res.writeHead(500, { "content-type": "text/html" }).end(HOSTILE.response);
      else res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
