import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { webhook } from "@postel/adapter-express";
import { InMemoryDedupStore, Receiver } from "@postel/core/inbound";
import express from "express";

/** What the receiver app handled: webhook ids per endpoint path, and every status it answered. */
export interface ReceiverLog {
  handled: Map<string, string[]>;
  answered: Map<string, number[]>;
  duplicates: number;
}

/** The three receivers the demo sends to, and the switch that mends the broken one. */
export interface DemoReceiver {
  url(path: "/healthy" | "/flaky" | "/broken"): string;
  log: ReceiverLog;
  fixBroken(): void;
  close(): Promise<void>;
}

/**
 * A real Express app on 127.0.0.1 using `@postel/adapter-express`: every route verifies signatures
 * over the exact bytes and deduplicates on `webhook-id`. In front of the gate, a little chaos:
 * `/flaky` answers 500, then 429 with `Retry-After`, then lets the webhook through;
 * `/broken` answers 503 until `fixBroken()`.
 */
export async function startReceiver(secrets: {
  healthy: string;
  flaky: string;
  broken: string;
}): Promise<DemoReceiver> {
  const dedup = InMemoryDedupStore();
  const receiver = Receiver({
    sources: {
      healthy: { verify: secrets.healthy, dedup },
      flaky: { verify: secrets.flaky, dedup },
      broken: { verify: secrets.broken, dedup },
    },
  });
  const log: ReceiverLog = { handled: new Map(), answered: new Map(), duplicates: 0 };
  let broken = true;
  const flakyAttempts = new Map<string, number>();
  const app = express();

  app.use((req, res, next) => {
    res.on("finish", () => {
      const list = log.answered.get(req.path) ?? [];
      list.push(res.statusCode);
      log.answered.set(req.path, list);
      if (res.getHeader("x-postel-duplicate") === "true") log.duplicates++;
    });
    next();
  });
  app.post("/flaky", (req, res, next) => {
    const id = String(req.headers["webhook-id"]);
    const attempt = (flakyAttempts.get(id) ?? 0) + 1;
    flakyAttempts.set(id, attempt);
    if (attempt === 1) return void res.status(500).send("database hiccup");
    if (attempt === 2) return void res.status(429).set("retry-after", "1").send("slow down");
    next();
  });
  app.post("/broken", (_req, res, next) =>
    broken ? void res.status(503).send("down for maintenance") : next(),
  );

  const record = (path: string) => (event: { id: string | undefined }) => {
    const list = log.handled.get(path) ?? [];
    list.push(String(event.id));
    log.handled.set(path, list);
  };
  app.post("/healthy", webhook(receiver, "healthy", record("/healthy")));
  app.post("/flaky", webhook(receiver, "flaky", record("/flaky")));
  app.post("/broken", webhook(receiver, "broken", record("/broken")));

  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    log,
    fixBroken: () => {
      broken = false;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
