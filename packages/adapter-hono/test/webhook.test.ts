import http from "node:http";
import { InMemoryDedupStore, Receiver, type StandardSchemaV1 } from "@postel/core/inbound";
import { generateSecret, sign } from "@postel/signing";
import { Hono } from "hono";
import { afterEach, describe, expect, expectTypeOf, test, vi } from "vitest";
import { webhook } from "../src/index.js";
import { listen } from "./serve.js";

type Order = { type: string; total: number };
const order: StandardSchemaV1<unknown, Order> = {
  "~standard": {
    version: 1,
    vendor: "test",
    validate: (value) =>
      typeof (value as Partial<Order>).total === "number"
        ? { value: value as Order }
        : { issues: [{ message: "expected a total", path: ["total"] }] },
  },
};

const secret = generateSecret();
const receiver = () =>
  Receiver({ sources: { shop: { verify: secret, schema: order, dedup: InMemoryDedupStore() } } });
const body = '{"type":"order.paid",  "total":12}';
const signed = (id = "msg_1") => ({
  "content-type": "application/json",
  ...sign({ id, timestamp: new Date(), body, keys: [secret] }),
});

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});
async function serve(app: Parameters<typeof listen>[0]) {
  const server = await listen(app);
  servers.push(server);
  return server;
}

describe("webhook() as middleware", () => {
  test("the route's next handler reads the typed event with c.get('webhook') and its answer is sent", async () => {
    const app = new Hono();
    app.post("/webhooks", webhook(receiver(), "shop"), (c) => {
      const event = c.get("webhook");
      expectTypeOf(event.payload).toEqualTypeOf<Order>();
      return c.json({ paid: event.payload.total }, 202);
    });
    const response = await (await serve(app)).post(new TextEncoder().encode(body), signed());
    expect(response.status).toBe(202);
    expect(JSON.parse(response.text)).toEqual({ paid: 12 });
  });

  test("a non-2xx answer from the route's handler is sent and releases the record, so the retry runs it", async () => {
    const app = new Hono();
    let calls = 0;
    app.post("/webhooks", webhook(receiver(), "shop"), (c) =>
      ++calls === 1 ? c.text("busy", 503) : c.text("ok"),
    );
    const server = await serve(app);
    const first = await server.post(new TextEncoder().encode(body), signed());
    expect([first.status, first.text]).toEqual([503, "busy"]);
    const retry = await server.post(new TextEncoder().encode(body), signed());
    expect([retry.status, retry.text, calls]).toEqual([200, "ok", 2]);
  });
});

describe("webhook() with a handler", () => {
  test("passes the event and a context whose c.get('webhook') is the same typed event", async () => {
    const app = new Hono<{ Bindings: { region: string } }>();
    const seen: unknown[] = [];
    app.post(
      "/webhooks",
      webhook(receiver(), "shop", (event, c) => {
        expectTypeOf(c.get("webhook").payload).toEqualTypeOf<Order>();
        seen.push(event.payload.total, c.get("webhook") === event);
      }),
    );
    const response = await (await serve(app)).post(new TextEncoder().encode(body), signed());
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(seen).toEqual([12, true]);
  });

  test("reports what the handler threw to onError and c.error, and to console.error by default", async () => {
    const app = new Hono();
    const reported: unknown[] = [];
    app.use(async (c, next) => {
      await next();
      reported.push(c.error?.message);
    });
    const failing = () => Promise.reject(new Error("db down"));
    const onError = (error: unknown) => reported.push(error);
    app.post("/webhooks", webhook(receiver(), "shop", failing, { onError }));
    app.post("/default", webhook(receiver(), "shop", failing));
    const server = await serve(app);
    const response = await server.post(new TextEncoder().encode(body), signed());
    expect(response.status).toBe(500);
    expect(response.text).not.toContain("db down");
    expect(reported).toEqual([new Error("db down"), "db down"]);

    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const url = server.url.replace("/webhooks", "/default");
    expect((await fetch(url, { method: "POST", body, headers: signed() })).status).toBe(500);
    expect(logged).toHaveBeenCalledWith(new Error("db down"));
    logged.mockRestore();
  });
});

describe("reading the body", () => {
  test("verifies after an earlier middleware read the raw bytes with c.req.arrayBuffer()", async () => {
    const app = new Hono();
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(body)]);
    app.use(async (c, next) => {
      expect((await c.req.arrayBuffer()).byteLength).toBe(bom.byteLength);
      await next();
    });
    app.post("/webhooks", webhook(receiver(), "shop"), async (c) =>
      c.text(String((await c.req.text()).length)),
    );
    const headers = sign({ id: "msg_1", timestamp: new Date(), body: bom, keys: [secret] });
    const response = await (await serve(app)).post(bom, headers);
    expect(response.status).toBe(200);
  });

  test("refuses an oversized chunked body (no content-length) with 413", async () => {
    const app = new Hono();
    const source = Receiver({ sources: { small: { verify: secret, maxBodyBytes: 1024 } } });
    app.post(
      "/webhooks",
      webhook(source, "small", () => {}),
    );
    const server = await serve(app);
    const chunk = new TextEncoder().encode("x".repeat(1 << 20));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull: (controller) => (++sent > 8 ? controller.close() : controller.enqueue(chunk)),
    });
    const response = await fetch(server.url, { method: "POST", body, duplex: "half" } as RequestInit);
    expect(response.status).toBe(413);
    expect(response.headers.get("x-postel-error")).toBe("PAYLOAD_TOO_LARGE");
  });

  test("answers 413 to a chunked body as soon as it passes the limit, while the client is still sending", async () => {
    const app = new Hono();
    const handler = vi.fn();
    const source = Receiver({ sources: { small: { verify: secret, maxBodyBytes: 1024 } } });
    app.post("/webhooks", webhook(source, "small", handler));
    const server = await serve(app);
    const answer = await new Promise<{ status: number | undefined; code: unknown }>((resolve, reject) => {
      const request = http.request(server.url, { method: "POST", headers: signed() });
      request.on("error", reject).on("response", (response) => {
        resolve({ status: response.statusCode, code: response.headers["x-postel-error"] });
        request.destroy();
      });
      // No content-length, and the request is never ended: only the bytes so far can trigger the answer.
      request.write("x".repeat(600));
      request.write("x".repeat(600));
    });
    expect(answer).toEqual({ status: 413, code: "PAYLOAD_TOO_LARGE" });
    expect(handler).not.toHaveBeenCalled();
  });

  test("refuses a declared oversized body with 413 without waiting for it", async () => {
    const app = new Hono();
    const source = Receiver({ sources: { small: { verify: secret, maxBodyBytes: 1024 } } });
    app.post(
      "/webhooks",
      webhook(source, "small", () => {}),
    );
    const server = await serve(app);
    // Headers only: the 10 MB never come, so only a gate that checks content-length first can answer.
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const request = http.request(server.url, { method: "POST", headers: { "content-length": 10_000_000 } });
      request.on("response", (response) => {
        resolve(response.statusCode);
        request.destroy();
      });
      request.on("error", reject);
      request.flushHeaders();
    });
    expect(status).toBe(413);
  });

  test("calling c.req.text() in a middleware before the gate is BODY_ALREADY_PARSED, naming the fix", async () => {
    const app = new Hono();
    app.use(async (c, next) => {
      await c.req.text();
      await next();
    });
    app.post(
      "/webhooks",
      webhook(receiver(), "shop", () => {}),
    );
    const response = await (await serve(app)).post(new TextEncoder().encode(body), signed());
    expect(response.status).toBe(500);
    expect(response.headers.get("x-postel-error")).toBe("BODY_ALREADY_PARSED");
    expect(JSON.parse(response.text).error.message).toContain("Mount webhook() before");
  });
});
