import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A webhook receiver on 127.0.0.1 that records every `webhook-id` it sees and what it answered. */
export interface TestReceiver {
  url: string;
  /** Every request that arrived, in order (held ones included), with its arrival time. */
  arrivals: { webhookId: string; agent: string; at: number }[];
  /** How many times each `webhook-id` was answered 200. */
  delivered: Map<string, number>;
  /** When each `webhook-id` was first answered 200 (`Date.now()`). */
  answeredAt: Map<string, number>;
  /** Requests currently held open. */
  held(): { webhookId: string; agent: string }[];
  /** Hold requests matching `predicate` open (never answered) instead of answering them. */
  holdWhere(predicate: (request: { webhookId: string; agent: string }) => boolean): void;
  /** Delay every answer by this many milliseconds (a slow receiver keeps a drain going). */
  delayMs: number;
  close(): Promise<void>;
}

/** Starts a receiver on an ephemeral port. */
export async function startReceiver(): Promise<TestReceiver> {
  const arrivals: TestReceiver["arrivals"] = [];
  const delivered = new Map<string, number>();
  const answeredAt = new Map<string, number>();
  const held = new Map<ServerResponse, { webhookId: string; agent: string }>();
  let holdPredicate: (request: { webhookId: string; agent: string }) => boolean = () => false;

  const answer = (request: { webhookId: string }, response: ServerResponse) => {
    if (response.destroyed) return;
    delivered.set(request.webhookId, (delivered.get(request.webhookId) ?? 0) + 1);
    if (!answeredAt.has(request.webhookId)) answeredAt.set(request.webhookId, Date.now());
    response.writeHead(200, { "content-type": "text/plain" }).end("ok");
  };
  const server = createServer((incoming: IncomingMessage, response: ServerResponse) => {
    const request = {
      webhookId: String(incoming.headers["webhook-id"]),
      agent: String(incoming.headers["user-agent"]),
    };
    incoming.resume();
    incoming.on("end", () => {
      arrivals.push({ ...request, at: Date.now() });
      if (holdPredicate(request)) {
        held.set(response, request);
        response.on("close", () => held.delete(response));
        return;
      }
      if (receiver.delayMs > 0) setTimeout(() => answer(request, response), receiver.delayMs);
      else answer(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const receiver: TestReceiver = {
    url: `http://127.0.0.1:${port}/hooks`,
    arrivals,
    delivered,
    answeredAt,
    held: () => [...held.values()],
    holdWhere(predicate) {
      holdPredicate = predicate;
    },
    delayMs: 0,
    async close() {
      for (const response of held.keys()) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}
