import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type AnyEventCatalog, type Clock, ExponentialBackoff, InMemoryStorage, Postel } from "@postel/core";
import { afterAll, beforeAll } from "vitest";

/**
 * A Postel outbox on InMemoryStorage that sends to a real receiver on 127.0.0.1 (`/fail` answers
 * 500, everything else 200) and dead-letters at the first failure, with `events` as its catalog
 * when given, on `clock` when given. `origin()` is the receiver's; `received` lists each request's
 * path, headers and body.
 */
export function outboxWithReceiver(events?: AnyEventCatalog, clock?: Clock) {
  const received: { path: string; headers: Record<string, string | string[] | undefined>; body: string }[] =
    [];
  const receiver = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      body += chunk;
    });
    req.on("end", () => {
      received.push({ path: req.url ?? "", headers: req.headers, body });
      if (req.url === "/fail") res.writeHead(500).end('<img src=x onerror="alert(1)"> receiver error');
      else res.writeHead(200).end();
    });
  });
  const postel = Postel({
    ...(clock === undefined ? {} : { clock }),
    outbound: {
      storage: InMemoryStorage(),
      http: { allowPrivateNetworks: true },
      retryPolicy: ExponentialBackoff({ maxAttempts: 0 }),
      ...(events === undefined ? {} : { events }),
    },
  });
  let origin = "";
  beforeAll(async () => {
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    receiver.close();
    await postel.close();
  });
  return { postel, origin: () => origin, received };
}
