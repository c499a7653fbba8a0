import http from "node:http";
import { Receiver } from "@postel/core/inbound";
import { twilio } from "@postel/signing";
import type { NextApiHandler } from "next";
import { afterEach, describe, expect, expectTypeOf, test } from "vitest";
import { webhookApiRoute } from "../src/index.js";
import { serveApiRoute } from "./mount.js";

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const servers: { close(): Promise<void> }[] = [];
async function serve(...args: Parameters<typeof serveApiRoute>) {
  const server = await serveApiRoute(...args);
  servers.push(server);
  return server;
}
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

describe("webhookApiRoute (Pages Router)", () => {
  test("is a Next API route handler", () => {
    const route = webhookApiRoute(
      Receiver({ sources: { a: { verify: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" } } }),
      "a",
      () => {},
    );
    expectTypeOf(route).toExtend<NextApiHandler>();
  });

  test("passes the absolute URL it was called on, so URL-signed (Twilio) webhooks verify", async () => {
    const authToken = "twilio-auth-token";
    const receiver = Receiver({ sources: { sms: { verify: twilio({ authToken }), parse: "form" } } });
    const events: unknown[] = [];
    const server = await serve(
      webhookApiRoute(receiver, "sms", (event) => events.push(event.payload)),
      {
        api: { bodyParser: false },
      },
    );
    const headers = {
      "content-type": "application/x-www-form-urlencoded",
      ...twilio.sign({ authToken, url: server.url, params: { Body: "hi" } }),
    };
    const response = await server.post(new TextEncoder().encode("Body=hi"), headers);
    expect(response.status).toBe(200);
    expect(events).toEqual([{ Body: "hi" }]);
  });

  test("refuses a declared oversized body with 413 without waiting for it, and a chunked one too", async () => {
    const receiver = Receiver({ sources: { small: { verify: secret, maxBodyBytes: 1024 } } });
    const server = await serve(
      webhookApiRoute(receiver, "small", () => {}),
      { api: { bodyParser: false } },
    );
    // Headers only: the 10 MB never come, so only a gate that checks content-length first can answer.
    const declared = await new Promise<number | undefined>((resolve, reject) => {
      const request = http.request(server.url, { method: "POST", headers: { "content-length": 10_000_000 } });
      request.on("response", (response) => {
        resolve(response.statusCode);
        request.destroy();
      });
      request.on("error", reject);
      request.flushHeaders();
    });
    expect(declared).toBe(413);
    let sent = 0;
    const chunk = new TextEncoder().encode("x".repeat(1 << 20));
    const body = new ReadableStream<Uint8Array>({
      pull: (controller) => (++sent > 8 ? controller.close() : controller.enqueue(chunk)),
    });
    const chunked = await fetch(server.url, { method: "POST", body, duplex: "half" } as RequestInit);
    expect([chunked.status, chunked.headers.get("x-postel-error")]).toEqual([413, "PAYLOAD_TOO_LARGE"]);
  });

  test("answers 413 to a chunked body as soon as it passes the limit, while the client is still sending", async () => {
    const receiver = Receiver({ sources: { small: { verify: secret, maxBodyBytes: 1024 } } });
    const server = await serve(
      webhookApiRoute(receiver, "small", () => {}),
      { api: { bodyParser: false } },
    );
    const answer = await new Promise<{ status: number | undefined; code: unknown }>((resolve, reject) => {
      const request = http.request(server.url, { method: "POST" });
      request.on("error", reject).on("response", (response) => {
        resolve({ status: response.statusCode, code: response.headers["x-postel-error"] });
        request.destroy();
      });
      // No content-length, and the request is never ended: only the bytes so far can trigger the answer.
      request.write("x".repeat(600));
      request.write("x".repeat(600));
    });
    expect(answer).toEqual({ status: 413, code: "PAYLOAD_TOO_LARGE" });
  });

  test("a stream other code already read is BODY_ALREADY_PARSED, naming the fix", async () => {
    const route = webhookApiRoute(Receiver({ sources: { a: { verify: secret } } }), "a", () => {});
    const server = await serve(
      async (req, res) => {
        for await (const _ of req);
        await route(req, res);
      },
      { api: { bodyParser: false } },
    );
    const response = await server.post(new TextEncoder().encode("{}"), {});
    expect([response.status, response.headers.get("x-postel-error")]).toEqual([500, "BODY_ALREADY_PARSED"]);
    expect(JSON.parse(response.text).error.message).toContain("bodyParser: false");
  });
});
