import { describe, expect, expectTypeOf, test, vi } from "vitest";
import { generateSecret } from "../secret.js";
import { sign } from "../sign.js";
import { InMemoryDedupStore } from "./dedup.js";
import { handleRequest, readRequest } from "./fetch-gate.js";
import { Receiver } from "./receiver.js";

const secret = generateSecret();
// Odd spacing on purpose: only the exact bytes verify.
const body = '{ "type":"order.created",  "data": {"z":1} }';
const receiver = (maxBodyBytes?: number) =>
  Receiver({
    sources: {
      billing: { verify: secret, dedup: InMemoryDedupStore(), ...(maxBodyBytes && { maxBodyBytes }) },
    },
  });
const signed = (payload: string | Uint8Array = body, id = "msg_1") => ({
  "content-type": "application/json",
  ...sign({ id, timestamp: new Date(), body: payload, keys: [secret] }),
});
const post = (payload: RequestInit["body"], headers: Record<string, string> = signed()) =>
  new Request("https://example.com/webhooks?tenant=7", {
    method: "POST",
    body: payload,
    headers,
    duplex: "half",
  } as RequestInit);

/** A body that sends `chunks` chunks of `size` bytes, then stays open until `end()` (if ever). */
function slowBody(chunks: number, size: number) {
  let pulled = 0;
  let close: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    close = resolve;
  });
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (pulled === chunks) {
          await closed;
          return controller.close();
        }
        pulled++;
        controller.enqueue(new Uint8Array(size).fill(120));
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulled: () => pulled, end: close };
}

/** The gate's error body, checked against the code in `x-postel-error`. */
const codeOf = async (response: Response) => {
  const { error } = (await response.json()) as { error: { code: string; message: string } };
  expect(response.headers.get("x-postel-error")).toBe(error.code);
  return error;
};

describe("handleRequest", () => {
  test("answers 200 to a signed Request and runs the handler with the exact bytes and the URL", async () => {
    const events: { payload: unknown; body: string }[] = [];
    const response = await handleRequest(receiver(), "billing", post(body), (event) => {
      events.push({ payload: event.payload, body: new TextDecoder().decode(event.body) });
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual({ ok: true });
    expect(events).toEqual([{ payload: { type: "order.created", data: { z: 1 } }, body }]);
  });

  test("answers a duplicate 200 with x-postel-duplicate, as the gate does, without running the handler again", async () => {
    const gate = receiver();
    const handler = vi.fn();
    await handleRequest(gate, "billing", post(body), handler);
    const again = await handleRequest(gate, "billing", post(body), handler);
    expect([again.status, again.headers.get("x-postel-duplicate")]).toEqual([200, "true"]);
    expect(handler).toHaveBeenCalledTimes(1);
  });

  test("answers 413 PAYLOAD_TOO_LARGE as soon as a stream passes the limit, and drains the rest", async () => {
    const slow = slowBody(3, 600);
    const handler = vi.fn();
    // The stream never ends until told: only an answer at the limit can come back here.
    const response = await handleRequest(receiver(1024), "billing", post(slow.stream), handler);
    expect(response.status).toBe(413);
    expect(await codeOf(response)).toEqual({
      code: "PAYLOAD_TOO_LARGE",
      message: 'The body is larger than 1024 bytes, the limit of source "billing".',
    });
    expect(handler).not.toHaveBeenCalled();
    await vi.waitFor(() => expect(slow.pulled()).toBe(3));
    slow.end();
  });

  test("answers 413 from a declared content-length without reading a byte", async () => {
    const slow = slowBody(1, 10);
    const request = post(slow.stream, { ...signed(), "content-length": "4096" });
    const response = await handleRequest(receiver(1024), "billing", request, vi.fn());
    expect(response.status).toBe(413);
    expect((await codeOf(response)).code).toBe("PAYLOAD_TOO_LARGE");
    expect(slow.pulled()).toBe(0);
    slow.end();
  });

  test("answers 500 BODY_ALREADY_PARSED to a Request whose body was read, naming the fix", async () => {
    const request = post(body);
    await request.text();
    const handler = vi.fn();
    const response = await handleRequest(receiver(), "billing", request, handler);
    expect(response.status).toBe(500);
    const error = await codeOf(response);
    expect(error.code).toBe("BODY_ALREADY_PARSED");
    expect(error.message).toContain("request.clone()");
    expect(handler).not.toHaveBeenCalled();
  });

  test("a body locked by a reader is BODY_ALREADY_PARSED too, with the adapter's fix", async () => {
    const request = post(body);
    request.body!.getReader();
    const response = await handleRequest(receiver(), "billing", request, vi.fn(), { fix: "Do X instead." });
    expect(await codeOf(response)).toMatchObject({
      code: "BODY_ALREADY_PARSED",
      message: expect.stringMatching(/Do X instead\.$/),
    });
  });

  test("answers 500 UNKNOWN_SOURCE for a source the receiver does not have", async () => {
    const response = await handleRequest(receiver() as Receiver, "nope", post(body), vi.fn());
    expect([response.status, (await codeOf(response)).code]).toEqual([500, "UNKNOWN_SOURCE"]);
  });

  test("answers 401 SIGNATURE_INVALID to re-serialised JSON", async () => {
    const response = await handleRequest(
      receiver(),
      "billing",
      post(JSON.stringify(JSON.parse(body))),
      vi.fn(),
    );
    expect([response.status, (await codeOf(response)).code]).toEqual([401, "SIGNATURE_INVALID"]);
  });

  test("answers 500 HANDLER_FAILED when the handler throws, and hands the error to onError", async () => {
    const errors: unknown[] = [];
    const failure = new Error("database down");
    const response = await handleRequest(
      receiver(),
      "billing",
      post(body),
      () => {
        throw failure;
      },
      { onError: (error) => errors.push(error) },
    );
    expect([response.status, (await codeOf(response)).code]).toEqual([500, "HANDLER_FAILED"]);
    expect(errors).toEqual([failure]);
  });
});

describe("readRequest", () => {
  test("returns the exact bytes, the URL, and the headers given in place of the Request's", async () => {
    const headers = signed();
    const read = await readRequest(receiver(), "billing", post(body, { "x-ignored": "1" }), { headers });
    expect(read.response).toBeUndefined();
    expect(new TextDecoder().decode(read.request!.body)).toBe(body);
    expect(read.request!.url).toBe("https://example.com/webhooks?tenant=7");
    expect(read.request!.headers).toBe(headers);
  });

  test("reads a Request without a body as empty bytes", async () => {
    const read = await readRequest(
      receiver(),
      "billing",
      new Request("https://example.com/", { method: "POST" }),
    );
    expect(read.request?.body).toEqual(new Uint8Array());
  });

  test("marks a body that broke off mid-stream as aborted", async () => {
    const stream = new ReadableStream<Uint8Array>({
      pull: (controller) => controller.error(new Error("socket hang up")),
    });
    const read = await readRequest(receiver(), "billing", post(stream));
    expect(read.aborted).toBe(true);
    expect(read.response?.status).toBe(500);
  });
});

describe("handleRequest types", () => {
  test("types the handler's event by the source's schema, and refuses a source the receiver lacks (checked by tsc)", () => {
    const schema = {
      "~standard": {
        version: 1,
        vendor: "test",
        validate: (value: unknown) => ({ value: value as { total: number } }),
      },
    } as const;
    const typed = Receiver({ sources: { shop: { verify: secret, schema } } });
    const route = (request: Request) =>
      handleRequest(typed, "shop", request, (event) => {
        expectTypeOf(event.payload).toEqualTypeOf<{ total: number }>();
      });
    expectTypeOf(route).returns.toEqualTypeOf<Promise<Response>>();
    // @ts-expect-error "nope" is not a source of this receiver
    const wrong = () => handleRequest(typed, "nope", post(body), () => {});
    expectTypeOf(wrong).toBeFunction();
  });
});
