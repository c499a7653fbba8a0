import { createServer, type IncomingMessage, request as httpRequest } from "node:http";
import type { Http2ServerRequest } from "node:http2";
import type { AddressInfo } from "node:net";
import { describe, expect, expectTypeOf, onTestFinished, test, vi } from "vitest";
import { generateSecret } from "../secret.js";
import { sign } from "../sign.js";
import { InMemoryDedupStore } from "./dedup.js";
import type { GateResponse } from "./gate-types.js";
import { handleNodeRequest, type NodeRequestLike, readNodeRequest } from "./node-gate.js";
import { Receiver } from "./receiver.js";

const secret = generateSecret();
const body = '{ "type":"order.created",  "data": {"z":1} }';
const bytes = (s: string) => new TextEncoder().encode(s);
const receiver = (maxBodyBytes?: number) =>
  Receiver({
    sources: {
      billing: { verify: secret, dedup: InMemoryDedupStore(), ...(maxBodyBytes && { maxBodyBytes }) },
    },
  });
const signed = (id = "msg_1") => ({
  "content-type": "application/json",
  ...sign({ id, timestamp: new Date(), body, keys: [secret] }),
});

/** A Node-like request: its chunks, its headers as Node has them (raw and joined), and any extra fields. */
function nodeRequest(
  chunks: AsyncIterable<Uint8Array> | Uint8Array[],
  headers: Record<string, string | string[]> = signed(),
  extra: Partial<NodeRequestLike> = {},
): NodeRequestLike {
  const rawHeaders = Object.entries(headers).flatMap(([name, value]) =>
    (Array.isArray(value) ? value : [value]).flatMap((v) => [name, v]),
  );
  const joined = Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(", ") : value]),
  );
  const iterable = Array.isArray(chunks)
    ? (async function* () {
        yield* chunks;
      })()
    : chunks;
  return {
    headers: { host: "example.com", ...joined },
    rawHeaders: ["Host", "example.com", ...rawHeaders],
    url: "/webhooks?tenant=7",
    [Symbol.asyncIterator]: () => iterable[Symbol.asyncIterator](),
    ...extra,
  };
}

const errorOf = (answer: { body: string; headers: Record<string, string> }) => {
  const { error } = JSON.parse(answer.body) as { error: { code: string; message: string } };
  expect(answer.headers["x-postel-error"]).toBe(error.code);
  return error;
};

describe("handleNodeRequest", () => {
  test("answers 200 to a signed Node request and runs the handler with the exact bytes", async () => {
    const events: unknown[] = [];
    const answer = await handleNodeRequest(receiver(), "billing", nodeRequest([bytes(body)]), (event) => {
      events.push(new TextDecoder().decode(event.body));
    });
    expect([answer.status, answer.body]).toEqual([200, '{"ok":true}']);
    expect(events).toEqual([body]);
  });

  test("hands the verifier each copy of a repeated header: identical ids count once, different ones are refused", async () => {
    const same = await handleNodeRequest(
      receiver(),
      "billing",
      nodeRequest([bytes(body)], { ...signed(), "webhook-id": ["msg_1", "msg_1"] }),
      () => {},
    );
    expect(same.status).toBe(200);
    const different = await handleNodeRequest(
      receiver(),
      "billing",
      nodeRequest([bytes(body)], { ...signed(), "webhook-id": ["msg_1", "msg_2"] }),
      () => {},
    );
    expect([different.status, errorOf(different).code]).toEqual([400, "MALFORMED_HEADER"]);
  });

  test("verifies raw bytes a raw body parser left in req.body", async () => {
    const handler = vi.fn();
    const answer = await handleNodeRequest(
      receiver(),
      "billing",
      nodeRequest([], signed(), { body: bytes(body) }),
      handler,
    );
    expect(answer.status).toBe(200);
    expect(handler).toHaveBeenCalledOnce();
  });

  test.each([
    ["a parsed JSON body", { body: { type: "order.created" } }],
    ["a parsed empty text body", { body: "" }],
    ["a stream other code read", { readableDidRead: true }],
    ["a stream that has ended", { body: {}, readableEnded: true }],
  ])("answers 500 BODY_ALREADY_PARSED to %s, naming the fix", async (_name, extra) => {
    const handler = vi.fn();
    const answer = await handleNodeRequest(
      receiver(),
      "billing",
      nodeRequest([bytes(body)], signed(), extra),
      handler,
      {
        fix: "Turn the parser off.",
      },
    );
    expect(answer.status).toBe(500);
    expect(errorOf(answer)).toMatchObject({
      code: "BODY_ALREADY_PARSED",
      message: expect.stringMatching(/Turn the parser off\.$/),
    });
    expect(handler).not.toHaveBeenCalled();
  });

  test("reads the stream when a body parser skipped it and left req.body = {}", async () => {
    const answer = await handleNodeRequest(
      receiver(),
      "billing",
      nodeRequest([bytes(body)], signed(), { body: {} }),
      () => {},
    );
    expect(answer.status).toBe(200);
  });

  test("answers 413 from a declared content-length without reading a byte", async () => {
    const read = vi.fn();
    const chunks = { [Symbol.asyncIterator]: () => ({ next: read }) };
    const answer = await handleNodeRequest(
      receiver(1024),
      "billing",
      nodeRequest(chunks, { ...signed(), "content-length": "4096" }),
      () => {},
    );
    expect([answer.status, errorOf(answer).code]).toEqual([413, "PAYLOAD_TOO_LARGE"]);
    expect(read).not.toHaveBeenCalled();
  });

  test("answers 413 as soon as the stream passes the limit, and drains the rest", async () => {
    let sent = 0;
    let end: () => void = () => {};
    const ended = new Promise<void>((resolve) => {
      end = resolve;
    });
    const chunks = (async function* () {
      for (; sent < 3; sent++) yield new Uint8Array(600);
      await ended; // the sender is still sending when the answer must come
    })();
    const handler = vi.fn();
    const answer = await handleNodeRequest(receiver(1024), "billing", nodeRequest(chunks), handler);
    expect([answer.status, errorOf(answer).code]).toEqual([413, "PAYLOAD_TOO_LARGE"]);
    expect(handler).not.toHaveBeenCalled();
    await vi.waitFor(() => expect(sent).toBe(3));
    end();
  });

  test("marks a request whose client went away mid-body as aborted, and logs nothing", async () => {
    const chunks = (async function* () {
      yield bytes("{");
      throw Object.assign(new Error("aborted"), { code: "ECONNRESET" });
    })();
    const onError = vi.fn();
    const answer = await handleNodeRequest(receiver(), "billing", nodeRequest(chunks), () => {}, { onError });
    expect(answer.aborted).toBe(true);
    expect(onError).not.toHaveBeenCalled();
  });

  test("answers 500 HANDLER_FAILED when the handler throws, and hands the error to onError", async () => {
    const failure = new Error("database down");
    const onError = vi.fn();
    const answer = await handleNodeRequest(
      receiver(),
      "billing",
      nodeRequest([bytes(body)]),
      () => {
        throw failure;
      },
      { onError },
    );
    expect([answer.status, errorOf(answer).code]).toEqual([500, "HANDLER_FAILED"]);
    expect(onError).toHaveBeenCalledWith(failure);
  });
});

describe("readNodeRequest", () => {
  test("takes Node's HTTP/1 and HTTP/2 requests as they are (checked by tsc)", () => {
    expectTypeOf<IncomingMessage>().toExtend<NodeRequestLike>();
    expectTypeOf<IncomingMessage & { body?: unknown }>().toExtend<NodeRequestLike>();
    expectTypeOf<Http2ServerRequest>().toExtend<NodeRequestLike>();
  });

  test("builds the absolute URL from host, x-forwarded-proto and the path, unless one is given", async () => {
    const behindProxy = await readNodeRequest(
      receiver(),
      "billing",
      nodeRequest([], { "x-forwarded-proto": "https, http" }),
    );
    expect(behindProxy.request?.url).toBe("https://example.com/webhooks?tenant=7");
    const tls = await readNodeRequest(
      receiver(),
      "billing",
      nodeRequest([], {}, { socket: { encrypted: true } }),
    );
    expect(tls.request?.url).toBe("https://example.com/webhooks?tenant=7");
    const given = await readNodeRequest(receiver(), "billing", nodeRequest([]), { url: "http://a.test/b" });
    expect(given.request?.url).toBe("http://a.test/b");
  });

  test("on a real 127.0.0.1 server: verifies an IncomingMessage, with its absolute URL", async () => {
    const urls: (string | undefined)[] = [];
    const url = await serve(async (req) => {
      const read = await readNodeRequest(receiver(), "billing", req);
      urls.push(read.request?.url);
      return read.response ?? receiver().handle("billing", read.request, () => {});
    });
    expect(await postTo(url)).toEqual({ status: 200, code: undefined });
    expect(urls).toEqual([url]);
  });

  test("on a real server: a stream other code read first is BODY_ALREADY_PARSED", async () => {
    const url = await serve(async (req) => {
      for await (const _ of req);
      return handleNodeRequest(receiver(), "billing", req, () => {});
    });
    expect(await postTo(url)).toEqual({ status: 500, code: "BODY_ALREADY_PARSED" });
  });
});

/** Serves `answer` on 127.0.0.1 (closed after the test) and returns the URL of its webhook path. */
async function serve(answer: (req: IncomingMessage) => Promise<GateResponse>): Promise<string> {
  const server = createServer(async (req, res) => {
    const { status, headers, body } = await answer(req);
    res.writeHead(status, headers).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks?tenant=7`;
}

function postTo(url: string): Promise<{ status: number; code: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", headers: signed() }, (res) => {
      const code = res.headers["x-postel-error"]?.toString();
      res.resume().on("end", () => resolve({ status: res.statusCode!, code }));
    });
    req.on("error", reject).end(body);
  });
}
