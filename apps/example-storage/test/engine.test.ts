import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { CapabilityUnsupportedError, ConfigurationError, LinearBackoff, Postel } from "@postel/core";
import { ManualClock } from "@postel/core/testing";
import { verify } from "@postel/signing";
import { afterEach, describe, expect, test } from "vitest";
import { MapStorage } from "../src/map-storage.js";

interface Received {
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A real receiver on 127.0.0.1 that answers the nth request (from 0) with `status(n)`. */
async function startReceiver(status: (n: number) => number = () => 200) {
  const requests: Received[] = [];
  const waiting: { count: number; resolve: () => void }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      res.writeHead(status(requests.length)).end();
      requests.push({ headers: req.headers, body: Buffer.concat(chunks) });
      for (const waiter of waiting.filter((w) => requests.length >= w.count)) waiter.resolve();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    /** Resolves once `count` requests have arrived. */
    received: (count: number) => new Promise<void>((resolve) => waiting.push({ count, resolve })),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

/** A Postel on MapStorage sending to a fresh receiver, retrying twice, 10 s then 20 s later. */
async function setup(options: { status?: (n: number) => number; clock?: ManualClock } = {}) {
  const receiver = await startReceiver(options.status);
  const postel = Postel({
    ...(options.clock ? { clock: options.clock } : {}),
    outbound: {
      storage: MapStorage(),
      retryPolicy: LinearBackoff({ maxAttempts: 2, step: "10s" }),
      http: { allowPrivateNetworks: true },
      credentials: { encryption: "off" },
    },
  });
  cleanup.push(receiver.close, () => postel.close());
  const endpoint = await postel.outbound.endpoints.create({ url: receiver.url });
  return { postel, receiver, endpoint };
}

describe("Postel on MapStorage", () => {
  test("started workers deliver a message signed with the endpoint's secret", async () => {
    const { postel, receiver, endpoint } = await setup();
    await postel.start();
    const { id } = await postel.outbound.send({ type: "order.created", data: { order: 7 } });
    await receiver.received(1);
    await postel.stop(); // waits for the outcome to be recorded

    const [request] = receiver.requests;
    const secret = await postel.outbound.endpoints.secret(endpoint.id);
    expect(verify(request!.body, request!.headers, { keys: secret }).id).toBe(id);
    expect(JSON.parse(request!.body.toString())).toMatchObject({ type: "order.created", data: { order: 7 } });
    expect(await postel.outbound.messages.get(id)).toMatchObject({ status: "dispatched" });
  });

  test("retries a 500 after the policy's delay, and not before, then succeeds", async () => {
    const clock = new ManualClock();
    const { postel, receiver } = await setup({ clock, status: (n) => (n === 0 ? 500 : 200) });
    const { id } = await postel.outbound.send({ type: "order.created", data: {} });
    await postel.drain();
    const [delivery] = await postel.outbound.messages.deliveries(id);
    expect(delivery).toMatchObject({ status: "pending", retriesUsed: 1, lastError: "HTTP 500" });

    clock.advance("9999ms");
    await postel.drain();
    expect(receiver.requests).toHaveLength(1);
    clock.advance("1ms");
    await postel.drain();
    expect(receiver.requests).toHaveLength(2);
    expect(await postel.outbound.messages.deliveries(id)).toMatchObject([
      { status: "succeeded", attemptsMade: 2 },
    ]);
    expect(await postel.outbound.messages.get(id)).toMatchObject({ status: "dispatched" });
  });

  test("dead-letters the delivery and its message once the retries are used up", async () => {
    const clock = new ManualClock();
    const { postel, receiver } = await setup({ clock, status: () => 500 });
    const deadLetters: string[] = [];
    postel.on("dead-letter", (event) => deadLetters.push(event.status));
    const { id } = await postel.outbound.send({ type: "order.created", data: {} });
    await postel.drain();
    clock.advance("10s");
    await postel.drain();
    clock.advance("20s");
    await postel.drain();
    clock.advance("1d");
    await postel.drain();

    expect(receiver.requests).toHaveLength(3);
    expect(await postel.outbound.messages.deliveries(id)).toMatchObject([
      { status: "dead-lettered", attemptsMade: 3, retriesUsed: 2 },
    ]);
    expect(await postel.outbound.messages.get(id)).toMatchObject({ status: "dead-lettered" });
    expect(deadLetters).toEqual(["dead-lettered"]);
  });
});

describe("what a delivery-only storage lacks gets a coded error", () => {
  test.each([
    ["stats()", "OPERATIONS_UNSUPPORTED", (p: Outbound) => p.stats()],
    ["replay()", "REPLAY_UNSUPPORTED", (p: Outbound) => p.replay({ messageIds: ["msg_1"] })],
    ["sendBatch()", "BATCH_SEND_UNSUPPORTED", (p: Outbound) => p.sendBatch([{ type: "a.b", data: {} }])],
    [
      "an endpoint with maxInFlight",
      "LIMITS_UNSUPPORTED",
      (p: Outbound) => p.endpoints.create({ url: "https://example.com/hook", maxInFlight: 1 }),
    ],
  ])("%s throws %s", async (_, code, call) => {
    const { postel } = await setup();
    const error = await call(postel.outbound).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(CapabilityUnsupportedError);
    expect(error).toMatchObject({ code });
  });

  test("outbound.retention is refused when Postel() starts, naming the option", () => {
    const start = () => Postel({ outbound: { storage: MapStorage(), retention: { maxAge: "30d" } } });
    expect(start).toThrow(ConfigurationError);
    expect(start).toThrow(/outbound\.retention: needs the storage's retention capability/);
  });

  test("send() in a caller's transaction is refused: MapStorage joins none", async () => {
    const { postel } = await setup();
    const send = postel.outbound.send({ type: "a.b", data: {} }, { tx: {} as never });
    await expect(send).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: /MapStorage has no transactions/,
    });
  });
});

type Outbound = Awaited<ReturnType<typeof setup>>["postel"]["outbound"];
