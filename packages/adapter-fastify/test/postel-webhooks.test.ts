import { request } from "node:http";
import { Writable } from "node:stream";
import { Receiver, type StandardSchemaV1 } from "@postel/core/inbound";
import type { MountedAdapter } from "@postel/core/testing";
import { generateSecret, sign, twilio } from "@postel/signing";
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, describe, expect, expectTypeOf, test } from "vitest";
import { postelWebhooks } from "../src/index.js";
import { listen } from "./listen.js";

const secret = generateSecret();
const body = '{ "type":"order.created",  "data": {"z":1} }';
const bytes = (s: string) => new TextEncoder().encode(s);
const signed = (id = "msg_1") => ({
  "content-type": "application/json",
  ...sign({ id, timestamp: new Date(), body, keys: [secret] }),
});

const servers: MountedAdapter[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});
async function serve(app: FastifyInstance, path?: string) {
  const server = await listen(app, path);
  servers.push(server);
  return server;
}

describe("postelWebhooks on Fastify", () => {
  test("leaves the app's JSON routes outside the plugin unaffected", async () => {
    const receiver = Receiver({ sources: { billing: { verify: secret } } });
    const app = Fastify();
    app.post("/api/orders", async (req) => ({ echoed: req.body }));
    app.register(postelWebhooks(receiver), {
      routes: [{ url: "/webhooks", source: "billing", handler: () => {} }],
    });
    const server = await serve(app);
    expect((await server.post(bytes(body), signed())).status).toBe(200);
    const api = await fetch(new URL("/api/orders", server.url), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"total":42}',
    });
    expect(await api.json()).toEqual({ echoed: { total: 42 } });
  });

  test("decorates the request with the event, honours the prefix, and passes the full URL (Twilio signs it)", async () => {
    const authToken = "twilio-auth-token";
    const receiver = Receiver({ sources: { sms: { verify: twilio({ authToken }), parse: "form" } } });
    const app = Fastify();
    app.register(postelWebhooks(receiver), {
      prefix: "/hooks",
      routes: [
        {
          url: "/sms",
          source: "sms",
          handler: (event, req, reply) => {
            const { Body } = event.payload as { Body: string };
            reply
              .type("text/xml")
              .send(`<Response><Message>${req.webhook === event && Body}</Message></Response>`);
          },
        },
      ],
    });
    const server = await serve(app, "/hooks/sms?tenant=7");
    const headers = twilio.sign({
      authToken,
      url: server.url,
      params: { Body: "hi" },
    });
    const response = await server.post(bytes("Body=hi"), {
      "content-type": "application/x-www-form-urlencoded",
      ...headers,
    });
    expect(response.status).toBe(200);
    expect(response.text).toBe("<Response><Message>hi</Message></Response>");
  });

  test("answers 413 in the gate's shape to a chunked body past the limit, while the client is still sending", async () => {
    const receiver = Receiver({ sources: { billing: { verify: secret, maxBodyBytes: 1024 } } });
    let handled = 0;
    const app = Fastify();
    app.register(postelWebhooks(receiver), {
      routes: [{ url: "/webhooks", source: "billing", handler: () => void handled++ }],
    });
    const server = await serve(app);
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(server.url, { method: "POST", headers: signed() });
      req.on("error", reject).on("response", (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => {
          req.destroy();
          resolve({ status: res.statusCode!, text });
        });
      });
      // No content-length, and the request is never ended: only the bytes so far can trigger the answer.
      expect(req.getHeader("content-length")).toBeUndefined();
      req.write("x".repeat(600));
      req.write("x".repeat(600));
    });
    expect(status).toBe(413);
    expect(JSON.parse(text).error).toEqual({
      code: "PAYLOAD_TOO_LARGE",
      message: 'The body is larger than 1024 bytes, the limit of source "billing".',
    });
    expect(handled).toBe(0);
  });

  test("logs what the handler threw on the request's logger", async () => {
    const receiver = Receiver({ sources: { billing: { verify: secret } } });
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const app = Fastify({ logger: { level: "error", stream } });
    app.register(postelWebhooks(receiver), {
      routes: [
        {
          url: "/webhooks",
          source: "billing",
          handler: () => {
            throw new Error("database down");
          },
        },
      ],
    });
    const response = await (await serve(app)).post(bytes(body), signed());
    expect(response.status).toBe(500);
    expect(response.headers.get("x-postel-error")).toBe("HANDLER_FAILED");
    expect(lines.map((line) => JSON.parse(line))).toMatchObject([
      { msg: 'webhook handler of "billing" failed', err: { message: "database down" } },
    ]);
  });

  test("types each route's payload by its source's schema (checked by tsc)", async () => {
    const schema: StandardSchemaV1<unknown, { total: number }> = {
      "~standard": {
        version: 1,
        vendor: "test",
        validate: (value) => ({ value: value as { total: number } }),
      },
    };
    const receiver = Receiver({ sources: { billing: { verify: secret, schema }, crm: { verify: secret } } });
    const app = Fastify().register(postelWebhooks(receiver), {
      routes: [
        {
          url: "/billing",
          source: "billing",
          handler: (event) => expectTypeOf(event.payload).toEqualTypeOf<{ total: number }>(),
        },
        { url: "/crm", source: "crm", handler: (event) => expectTypeOf(event.payload).toBeUnknown() },
      ],
    });
    await expect(app.ready()).resolves.toBeDefined();
    await app.close();
  });

  test("refuses to start with a route for an unknown source", async () => {
    const receiver = Receiver({ sources: { billing: { verify: secret } } });
    const app = Fastify().register(postelWebhooks(receiver), {
      // @ts-expect-error "nope" is not a source of this receiver
      routes: [{ url: "/nope", source: "nope", handler: () => {} }],
    });
    await expect(app.ready()).rejects.toMatchObject({ code: "UNKNOWN_SOURCE" });
    await app.close();
  });
});
