import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A local HTTP endpoint that records every `webhook-id` it is sent, by the sender's User-Agent. */
export interface WebhookReceiver {
  url: string;
  /** How many requests each `webhook-id` arrived in (counted on arrival, answered or not). */
  readonly seen: Map<string, number>;
  /** The `webhook-id`s of every request held open (never answered). */
  readonly held: Set<string>;
  /** Every request's `webhook-id` and arrival time (`Date.now()`), in arrival order. */
  readonly arrivals: { id: string; at: number }[];
  /** When each `webhook-id` was first answered (`Date.now()`). */
  readonly answeredAt: Map<string, number>;
  /** Requests received from the sender whose User-Agent ends in `/<name>`. */
  countFrom(name: string): number;
  close(): Promise<void>;
}

/**
 * Start a receiver on 127.0.0.1 that answers 204, except that requests for which `hold(name, n)`
 * is true (`n`: how many requests that sender had made before) are never answered: the sender keeps
 * them in flight until it dies or times out.
 */
export async function startReceiver(
  hold: (sender: string, previous: number) => boolean = () => false,
): Promise<WebhookReceiver> {
  const seen = new Map<string, number>();
  const held = new Set<string>();
  const arrivals: { id: string; at: number }[] = [];
  const answeredAt = new Map<string, number>();
  const bySender = new Map<string, number>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const id = String(req.headers["webhook-id"] ?? "");
    const sender =
      String(req.headers["user-agent"] ?? "")
        .split("/")
        .at(-1) ?? "";
    const previous = bySender.get(sender) ?? 0;
    bySender.set(sender, previous + 1);
    seen.set(id, (seen.get(id) ?? 0) + 1);
    arrivals.push({ id, at: Date.now() });
    if (hold(sender, previous)) {
      held.add(id);
      return;
    }
    req.resume();
    req.once("end", () => {
      if (!answeredAt.has(id)) answeredAt.set(id, Date.now());
      res.writeHead(204).end();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    seen,
    held,
    arrivals,
    answeredAt,
    countFrom: (name) => bySender.get(name) ?? 0,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

/** Resolve once `condition()` holds, polling every 25 ms; reject with `what` after `timeoutMs`. */
export async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Resolve once `condition()` holds; reject when `progress()` has not moved for `stallMs` (a stall) or
 * after `capMs` in all. For waits on work a loaded machine does slowly but surely: a fixed timeout
 * tuned to a quiet machine fails there without anything being wrong.
 */
export async function waitWhileMoving(
  condition: () => boolean | Promise<boolean>,
  progress: () => number,
  what: string,
  { stallMs, capMs }: { stallMs: number; capMs: number },
) {
  const started = Date.now();
  let last = progress();
  let movedAt = started;
  while (!(await condition())) {
    const now = Date.now();
    if (progress() !== last) {
      last = progress();
      movedAt = now;
    }
    if (now - movedAt > stallMs)
      throw new Error(`nothing moved for ${stallMs} ms waiting for ${what} (at ${last})`);
    if (now - started > capMs)
      throw new Error(`timed out after ${capMs} ms waiting for ${what} (at ${last})`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
