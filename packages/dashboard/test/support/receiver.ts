import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { HOSTILE } from "./hostile.js";

/**
 * A real receiver on 127.0.0.1: `/ok` answers 200; `/broken` answers 500 with a hostile body until
 * `fix()`; any path told to `answer` answers that from then on.
 */
export interface TestReceiver {
  url(path: string): string;
  fix(): void;
  /** From now on, `path` answers `status` with `body` (a 2xx counts as delivered). */
  answer(path: string, status: number, body: string): void;
  /** `webhook-id`s received on each path with a 2xx. */
  delivered: Map<string, string[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<TestReceiver> {
  let broken = true;
  const answers = new Map<string, { status: number; body: string }>();
  const delivered = new Map<string, string[]>();
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const path = req.url ?? "/";
      const { status, body } =
        answers.get(path) ??
        (path === "/broken" && broken ? { status: 500, body: HOSTILE.snippet } : { status: 200, body: "ok" });
      if (status < 300) {
        delivered.set(path, [...(delivered.get(path) ?? []), String(req.headers["webhook-id"])]);
      }
      res.writeHead(status, { "content-type": "text/html" }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    fix: () => {
      broken = false;
    },
    answer: (path, status, body) => {
      answers.set(path, { status, body });
    },
    delivered,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
