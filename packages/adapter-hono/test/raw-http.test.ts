import { Receiver, type VerifiedEvent } from "@postel/core/inbound";
import { generateSecret, sign } from "@postel/signing";
import { Hono } from "hono";
import { afterEach, describe, expect, test, vi } from "vitest";
import { webhook } from "../src/index.js";
import { abortMidBody, postRaw } from "./raw-http.js";
import { listen } from "./serve.js";

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

/** `withNodeRequest: false` drops the env, as on a runtime whose requests carry only fetch Headers. */
async function serve({ withNodeRequest = true } = {}) {
  const events: VerifiedEvent[] = [];
  const app = new Hono();
  app.post(
    "/webhooks",
    webhook(Receiver({ sources: { app: { verify: secret } } }), "app", (event) => void events.push(event)),
  );
  const server = await listen({
    fetch: (request, env) => (withNodeRequest ? app.fetch(request, env) : app.fetch(request)),
  });
  servers.push(server);
  return { ...server, events };
}

describe("webhook() on @hono/node-server, over raw HTTP", () => {
  test("accepts a webhook-id sent twice with the same value", async () => {
    const { url, events } = await serve();
    const response = await postRaw(url, { ...signed(), "webhook-id": ["msg_1", "msg_1"] }, body);
    expect(response).toEqual({ status: 200, code: undefined });
    expect(events.map((event) => event.id)).toEqual(["msg_1"]);
  });

  test("refuses a webhook-id sent twice with different values as 400 MALFORMED_HEADER", async () => {
    const { url, events } = await serve();
    const response = await postRaw(url, { ...signed(), "webhook-id": ["msg_1", "msg_2"] }, body);
    expect(response).toEqual({ status: 400, code: "MALFORMED_HEADER" });
    expect(events).toHaveLength(0);
  });

  test.each([true, false])(
    "verifies a signature that arrives in the second of two webhook-signature headers (Node request: %s)",
    async (withNodeRequest) => {
      const { url } = await serve({ withNodeRequest });
      const headers = signed();
      const stale = `v1,${Buffer.alloc(32).toString("base64")}`;
      const response = await postRaw(
        url,
        { ...headers, "webhook-signature": [stale, headers["webhook-signature"]] },
        body,
      );
      expect(response.status).toBe(200);
    },
  );

  test("with fetch Headers only, refuses a repeated webhook-id (the copies arrive joined), never accepts it", async () => {
    const { url, events } = await serve({ withNodeRequest: false });
    for (const ids of [
      ["msg_1", "msg_1"],
      ["msg_1", "msg_2"],
    ]) {
      const response = await postRaw(url, { ...signed(), "webhook-id": ids }, body);
      expect(response).toEqual({ status: 401, code: "SIGNATURE_INVALID" });
    }
    expect(events).toHaveLength(0);
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
