import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type AnyEventCatalog, ExponentialBackoff, InMemoryStorage, Postel } from "@postel/core";
import { afterAll, beforeAll } from "vitest";

/**
 * A Postel outbox on InMemoryStorage that sends to a real receiver on 127.0.0.1 (`/fail` answers
 * 500, everything else 200) and dead-letters at the first failure, with `events` as its catalog
 * when given. `origin()` is the receiver's.
 */
export function outboxWithReceiver(events?: AnyEventCatalog) {
  const receiver = createServer((req, res) => {
    req.resume().on("end", () => res.writeHead(req.url === "/fail" ? 500 : 200).end());
  });
  const postel = Postel({
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
  return { postel, origin: () => origin };
}
