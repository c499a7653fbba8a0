import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Clock, LinearBackoff, Postel, type PostelInstance, type Storage } from "@postel/core";
import { PostgresStorage } from "@postel/storage-postgres";
import { SqliteStorage } from "@postel/storage-sqlite";

/** What the receiver was sent: the path and the body, in arrival order. */
export interface ReceivedRequest {
  path: string;
  body: Buffer;
}

/**
 * A receiver on 127.0.0.1: `/ok` answers 200, `/fail` 500 and `/bad` 400, both with `failBody`
 * (default "boom: receiver is down"), whatever the query; `answer(path, status, body)` sets what
 * another path answers from now on. It keeps every request.
 */
export async function startReceiver(failBody = "boom: receiver is down"): Promise<{
  url(path: string): string;
  answer(path: string, status: number, body: string): void;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}> {
  const requests: ReceivedRequest[] = [];
  const answers = new Map<string, { status: number; body: string }>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      requests.push({ path: request.url ?? "", body: Buffer.concat(chunks) });
      const path = (request.url ?? "").split("?")[0]!;
      const answer = answers.get(path);
      if (answer) {
        response.writeHead(answer.status, { "content-type": "text/plain" });
        response.end(answer.body);
        return;
      }
      const ok = path === "/ok";
      response.writeHead(ok ? 200 : path === "/bad" ? 400 : 500, { "content-type": "text/plain" });
      response.end(ok ? "thanks" : failBody);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    answer: (path, status, body) => answers.set(path, { status, body }),
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * A Postel on the same database the CLI reads, as an application would run it: no retries (a failure
 * dead-letters at once), no breaker or auto-disable, so every outcome is decided in one `drain()`.
 * With `clock`, its time (a `ManualClock` set in the past makes history that is already old).
 */
export function application(database: string, clock?: Clock): PostelInstance<Storage<unknown>> {
  const storage = database.startsWith("postgres")
    ? PostgresStorage({ url: database }, { listen: false })
    : SqliteStorage({ url: `file:${database}` });
  return Postel({
    ...(clock === undefined ? {} : { clock }),
    outbound: {
      storage,
      retryPolicy: LinearBackoff({ maxAttempts: 0, step: "1s" }),
      circuitBreaker: false,
      autoDisable: false,
      http: { allowPrivateNetworks: true, timeout: "5s" },
    },
  });
}

/** Drains until nothing is left to do now. */
export async function drainAll(app: PostelInstance<Storage<unknown>>): Promise<void> {
  for (let round = 0; round < 50; round++) {
    const result = await app.drain();
    if (Object.values(result).every((n) => n === 0)) return;
  }
}
