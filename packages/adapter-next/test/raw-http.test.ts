import { Receiver, type VerifiedEvent } from "@postel/core/inbound";
import { generateSecret, sign } from "@postel/signing";
import { afterEach, describe, expect, test, vi } from "vitest";
import { webhookApiRoute, webhookRoute } from "../src/index.js";
import { serveApiRoute, serveRoute } from "./mount.js";
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

const routers = {
  "Pages Router API route": (handler: (event: VerifiedEvent) => void) =>
    serveApiRoute(webhookApiRoute(Receiver({ sources: { app: { verify: secret } } }), "app", handler), {
      api: { bodyParser: false },
    }),
  "App Router route handler": (handler: (event: VerifiedEvent) => void) =>
    serveRoute(webhookRoute(Receiver({ sources: { app: { verify: secret } } }), "app", handler)),
};

async function serve(router: keyof typeof routers) {
  const events: VerifiedEvent[] = [];
  const server = await routers[router]((event) => void events.push(event));
  servers.push(server);
  return { ...server, events };
}

describe("webhookApiRoute (Pages Router), over raw HTTP", () => {
  test("accepts a webhook-id sent twice with the same value", async () => {
    const { url, events } = await serve("Pages Router API route");
    const response = await postRaw(url, { ...signed(), "webhook-id": ["msg_1", "msg_1"] }, body);
    expect(response).toEqual({ status: 200, code: undefined });
    expect(events.map((event) => event.id)).toEqual(["msg_1"]);
  });

  test("refuses a webhook-id sent twice with different values as 400 MALFORMED_HEADER", async () => {
    const { url, events } = await serve("Pages Router API route");
    const response = await postRaw(url, { ...signed(), "webhook-id": ["msg_1", "msg_2"] }, body);
    expect(response).toEqual({ status: 400, code: "MALFORMED_HEADER" });
    expect(events).toHaveLength(0);
  });
});

describe("webhookRoute (App Router), over raw HTTP through Next's NextRequest adapter", () => {
  test("refuses a repeated webhook-id, identical or not (the copies arrive joined), never accepts it", async () => {
    const { url, events } = await serve("App Router route handler");
    for (const ids of [
      ["msg_1", "msg_1"],
      ["msg_1", "msg_2"],
    ]) {
      const response = await postRaw(url, { ...signed(), "webhook-id": ids }, body);
      expect(response).toEqual({ status: 401, code: "SIGNATURE_INVALID" });
    }
    expect(events).toHaveLength(0);
  });
});

describe.each(Object.keys(routers) as (keyof typeof routers)[])("%s, over raw HTTP", (router) => {
  test("verifies a signature that arrives in the second of two webhook-signature headers", async () => {
    const { url } = await serve(router);
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
    const { url, server, events } = await serve(router);
    const errors = vi.spyOn(console, "error");
    const stderr = vi.spyOn(process.stderr, "write");
    await abortMidBody(server, url, signed(), body);
    expect((await postRaw(url, signed(), body)).status).toBe(200);
    expect(errors).not.toHaveBeenCalled();
    expect(stderr).not.toHaveBeenCalled();
    expect(events).toHaveLength(1);
  });
});
