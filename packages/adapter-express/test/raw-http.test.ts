import { Receiver, type VerifiedEvent } from "@postel/core/inbound";
import { generateSecret, sign } from "@postel/signing";
import express from "express";
import { afterEach, describe, expect, test, vi } from "vitest";
import { webhook } from "../src/index.js";
import { listen } from "./listen.js";
import { abortMidBody, postRaw } from "./raw-http.js";

// Requests fetch cannot send: a header repeated on the wire, and a body the client abandons.
const secret = generateSecret();
const body = '{"type":"order.created","data":{"id":1}}';
const signed = () => ({
  "content-type": "application/json",
  ...sign({ id: "msg_1", timestamp: new Date(), body, keys: [secret] }),
});

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const server of servers.splice(0)) await server.close();
});

async function serve() {
  const events: VerifiedEvent[] = [];
  const app = express();
  // As in production: Express's default error handler stays quiet only when env is "test".
  app.set("env", "production");
  app.post(
    "/webhooks",
    webhook(Receiver({ sources: { app: { verify: secret } } }), "app", (event) => void events.push(event)),
  );
  const server = await listen(app);
  servers.push(server);
  return { ...server, url: `${server.url}/webhooks`, events };
}

describe("webhook() on Express, over raw HTTP", () => {
  test("accepts a webhook-id sent twice with the same value", async () => {
    const { url, events } = await serve();
    const headers = signed();
    const response = await postRaw(url, { ...headers, "webhook-id": ["msg_1", "msg_1"] }, body);
    expect(response).toEqual({ status: 200, code: undefined });
    expect(events.map((event) => event.id)).toEqual(["msg_1"]);
  });

  test("refuses a webhook-id sent twice with different values as 400 MALFORMED_HEADER", async () => {
    const { url, events } = await serve();
    const response = await postRaw(url, { ...signed(), "webhook-id": ["msg_1", "msg_2"] }, body);
    expect(response).toEqual({ status: 400, code: "MALFORMED_HEADER" });
    expect(events).toHaveLength(0);
  });

  test("verifies a signature that arrives in the second of two webhook-signature headers", async () => {
    const { url } = await serve();
    const headers = signed();
    const stale = `v1,${Buffer.alloc(32).toString("base64")}`;
    const response = await postRaw(
      url,
      { ...headers, "webhook-signature": [stale, headers["webhook-signature"]] },
      body,
    );
    expect(response.status).toBe(200);
  });

  test("drops a client that aborts mid-body without writing to the logs, and keeps serving", async () => {
    const { url, server, events } = await serve();
    const errors = vi.spyOn(console, "error");
    const stderr = vi.spyOn(process.stderr, "write");
    await abortMidBody(server, url, signed(), body);
    expect((await postRaw(url, signed(), body)).status).toBe(200);
    expect(errors).not.toHaveBeenCalled();
    expect(stderr).not.toHaveBeenCalled();
    expect(events).toHaveLength(1);
  });
});
