import { request } from "node:http";
import { InMemoryDedupStore, Receiver, type VerifiedEvent } from "@postel/core/inbound";
import type { MountedAdapter } from "@postel/core/testing";
import { generateSecret, sign, twilio } from "@postel/signing";
import express from "express";
import { afterEach, describe, expect, test } from "vitest";
import { webhook } from "../src/index.js";
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
async function serve(app: express.Express, path?: string) {
  const server = await listen(app, path);
  servers.push(server);
  return server;
}

describe("webhook() on Express", () => {
  test("verifies the Buffer left by express.raw() in front of it", async () => {
    const receiver = Receiver({ sources: { billing: { verify: secret } } });
    const events: VerifiedEvent[] = [];
    const app = express();
    app.post(
      "/webhooks",
      express.raw({ type: "*/*" }),
      webhook(receiver, "billing", (event) => void events.push(event)),
    );
    const response = await (await serve(app)).post(bytes(body), signed());
    expect(response.status).toBe(200);
    expect(Buffer.from(events[0]!.body).toString()).toBe(body);
  });

  test("leaves express.json() working on the app's other routes", async () => {
    const receiver = Receiver({ sources: { billing: { verify: secret } } });
    const app = express();
    app.post(
      "/webhooks",
      webhook(receiver, "billing", () => {}),
    );
    app.use(express.json());
    app.post("/api/orders", (req, res) => void res.json({ echoed: req.body }));
    const server = await serve(app);
    expect((await server.post(bytes(body), signed())).status).toBe(200);
    const api = await fetch(new URL("/api/orders", server.url), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"total":42}',
    });
    expect(await api.json()).toEqual({ echoed: { total: 42 } });
  });

  test("answers 413 to a chunked body as soon as it passes the limit, while the client is still sending", async () => {
    const receiver = Receiver({ sources: { billing: { verify: secret, maxBodyBytes: 1024 } } });
    let handled = 0;
    const app = express();
    app.post(
      "/webhooks",
      webhook(receiver, "billing", () => void handled++),
    );
    const server = await serve(app);
    const { status, headers, text } = await new Promise<{ status: number; headers: Headers; text: string }>(
      (resolve, reject) => {
        const req = request(server.url, { method: "POST", headers: signed() });
        req.on("error", reject).on("response", (res) => {
          let text = "";
          res.setEncoding("utf8").on("data", (chunk: string) => {
            text += chunk;
          });
          res.on("end", () => {
            req.destroy();
            resolve({
              status: res.statusCode!,
              headers: new Headers(res.headers as Record<string, string>),
              text,
            });
          });
        });
        // No content-length, and the request is never ended: only the bytes so far can trigger the answer.
        expect(req.getHeader("content-length")).toBeUndefined();
        req.write("x".repeat(600));
        req.write("x".repeat(600));
      },
    );
    expect(status).toBe(413);
    expect(headers.get("x-postel-error")).toBe("PAYLOAD_TOO_LARGE");
    expect(JSON.parse(text).error.code).toBe("PAYLOAD_TOO_LARGE");
    expect(handled).toBe(0);
  });

  test("answers BODY_ALREADY_PARSED behind express.urlencoded(), naming the fix", async () => {
    const receiver = Receiver({ sources: { sms: { verify: secret, parse: "form" } } });
    const app = express();
    app.use(express.urlencoded());
    app.post(
      "/webhooks",
      webhook(receiver, "sms", () => {}),
    );
    const response = await (await serve(app)).post(bytes("Body=hi"), {
      "content-type": "application/x-www-form-urlencoded",
    });
    expect(response.status).toBe(500);
    expect(response.headers.get("x-postel-error")).toBe("BODY_ALREADY_PARSED");
    expect(JSON.parse(response.text).error.message).toContain("express.raw({ type: '*/*' })");
  });

  test("passes the full URL (Twilio signs it) and keeps a response the handler wrote itself", async () => {
    const authToken = "twilio-auth-token";
    const receiver = Receiver({ sources: { sms: { verify: twilio({ authToken }), parse: "form" } } });
    const app = express();
    app.post(
      "/sms",
      webhook(receiver, "sms", (event, _req, res) => {
        const { Body } = event.payload as { Body: string };
        res.type("text/xml").send(`<Response><Message>You said ${Body}</Message></Response>`);
      }),
    );
    const server = await serve(app, "/sms?tenant=7");
    const headers = twilio.sign({ authToken, url: server.url, params: { Body: "hi" } });
    const response = await server.post(bytes("Body=hi"), {
      "content-type": "application/x-www-form-urlencoded",
      ...headers,
    });
    expect(response.status).toBe(200);
    expect(response.text).toBe("<Response><Message>You said hi</Message></Response>");
  });

  test("sets res.locals.webhook for the handler and hands what it threw to onError", async () => {
    const receiver = Receiver({ sources: { billing: { verify: secret, dedup: InMemoryDedupStore() } } });
    const seen: unknown[] = [];
    const errors: unknown[] = [];
    const app = express();
    app.post(
      "/webhooks",
      webhook(
        receiver,
        "billing",
        (event, _req, res) => {
          seen.push(res.locals["webhook"] === event);
          throw new Error("database down");
        },
        { onError: (error) => errors.push(error) },
      ),
    );
    const response = await (await serve(app)).post(bytes(body), signed());
    expect(response.status).toBe(500);
    expect(response.headers.get("x-postel-error")).toBe("HANDLER_FAILED");
    expect(seen).toEqual([true]);
    expect(errors).toEqual([new Error("database down")]);
  });

  test("throws when mounted for a source the receiver does not have", () => {
    const receiver = Receiver({ sources: { billing: { verify: secret } } });
    // @ts-expect-error "nope" is not a source of this receiver
    expect(() => webhook(receiver, "nope", () => {})).toThrow(
      expect.objectContaining({ code: "UNKNOWN_SOURCE" }),
    );
  });
});
