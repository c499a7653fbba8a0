import type { Server } from "node:http";
import { generateSecret, sign } from "@postel/signing";
import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../clock.js";
import { InMemoryDedupStore } from "@postel/signing/inbound";
import { Receiver, type VerifiedEvent } from "@postel/signing/inbound";
import { rawHttpTests } from "./adapter-raw-http-tests.js";
import { conformanceEvents, signedEvent } from "./conformance-events.js";

/** What the suite sends and reads back: plain bytes and headers, so every framework is driven alike. */
export interface AdapterResponse {
  status: number;
  headers: Headers;
  text: string;
}

/** A mounted adapter: send a POST with these exact bytes and headers, then close. */
export interface MountedAdapter {
  post(body: Uint8Array, headers: Record<string, string>): Promise<AdapterResponse>;
  close(): Promise<void>;
  /**
   * The URL `post` sends to, on `server`: the suite sends there what fetch cannot (a header line
   * repeated, a body abandoned half-way). Required unless the wiring skips `"raw-http"`.
   */
  url?: string;
  /** The Node `http.Server` behind `url`, so the suite sees when an abandoned request has closed. */
  server?: Server;
}

/**
 * What the suite's handler gets: a verified event, with `type` and `data` (the schema's output) when
 * the source has `events`, as a catalog source's handler does.
 */
export type ConformanceEvent = VerifiedEvent & { type?: string; data?: unknown };

/** How an adapter package wires itself into the shared suite. */
export interface AdapterConformanceOptions {
  /** Shown in the top-level `describe`. */
  name: string;
  /**
   * Mount `handler` for `source` of `receiver` on a real instance of the framework and return a way
   * to POST to it. With `preParsed: true`, mount it the wrong way on purpose — behind the framework's
   * JSON body parser — so the suite can check the adapter fails loudly instead of mis-verifying.
   * The source may have `events` (`conformanceEvents`): the handler then gets `type` and `data` too.
   */
  mount(
    receiver: Receiver,
    source: string,
    handler: (event: ConformanceEvent) => unknown,
    options: { preParsed: boolean },
  ): Promise<MountedAdapter>;
  /**
   * The runtime hands the adapter only fetch `Headers`, which have already joined the copies of a
   * repeated header with ", " (Next's App Router, Hono off Node). The suite then checks the
   * documented limitation instead: a repeated `webhook-id` is refused, never accepted.
   */
  fetchHeadersOnly?: boolean;
  /**
   * Tests to skip, each with its reason (shown in the title): `"pre-parsed"`, the body parsed before
   * the gate; `"raw-http"`, the requests sent over a socket to `url` (for an adapter called in process).
   */
  skip?: Partial<Record<"pre-parsed" | "raw-http", string>>;
}

const T0 = Date.UTC(2026, 0, 1);

/**
 * Registers the adapter conformance suite: every adapter, driven through its real framework, must
 * keep the exact bytes, answer the gate's codes and statuses, deduplicate, release on failure, hand
 * the gate each copy of a repeated header, drop a client that aborts mid-body without a log line, and,
 * for a source given the event catalog, hand over `type` and `data` or refuse what it does not declare.
 * @example
 * runAdapterConformance({ name: "express", mount: async (receiver, source, handler, { preParsed }) => { ... } });
 */
export function runAdapterConformance(options: AdapterConformanceOptions): void {
  const mounted: MountedAdapter[] = [];
  afterEach(async () => {
    for (const m of mounted.splice(0)) await m.close();
  });

  async function setup(
    extra: {
      maxBodyBytes?: number;
      preParsed?: boolean;
      failFirst?: number;
      slowMs?: number;
      /** Give the source `conformanceEvents`, and `unknownTypes` when set. */
      events?: { unknownTypes?: "acknowledge" };
    } = {},
  ) {
    const clock = new ManualClock(T0);
    const secret = generateSecret();
    const oldSecret = generateSecret();
    const receiver = Receiver({
      clock,
      sources: {
        app: {
          verify: [secret, oldSecret],
          dedup: InMemoryDedupStore(),
          ...(extra.maxBodyBytes ? { maxBodyBytes: extra.maxBodyBytes } : {}),
          ...(extra.events && { events: conformanceEvents, ...extra.events }),
        },
      },
    });
    const calls: ConformanceEvent[] = [];
    let failures = extra.failFirst ?? 0;
    const handler = async (event: ConformanceEvent) => {
      calls.push(event);
      if (extra.slowMs) await new Promise((resolve) => setTimeout(resolve, extra.slowMs));
      if (failures > 0) {
        failures--;
        throw new Error("handler failed on purpose");
      }
    };
    const adapter = await options.mount(receiver as unknown as Receiver, "app", handler, {
      preParsed: extra.preParsed ?? false,
    });
    mounted.push(adapter);
    const signed = (body: string | Uint8Array, opts: { id?: string; at?: number; key?: string } = {}) =>
      sign({
        id: opts.id ?? "msg_1",
        timestamp: Math.floor((opts.at ?? T0) / 1000),
        body,
        keys: [opts.key ?? secret],
      });
    const bytes = (s: string) => new TextEncoder().encode(s);
    /** A catalog event `{ type, timestamp, data }`, signed: what to pass `adapter.post`. */
    const event = (type: string, data: unknown) => signedEvent(secret, type, data, { at: T0 });
    return { adapter, calls, signed, bytes, event, secret, oldSecret, clock };
  }

  const errorCode = async (response: AdapterResponse) => {
    expect(response.headers.get("x-postel-error")).toBe(JSON.parse(response.text).error.code);
    return JSON.parse(response.text).error.code as string;
  };

  describe(`adapter conformance: ${options.name}`, () => {
    // Deliberately odd spacing and key order: only the exact bytes verify.
    const body = '{ "type":"order.created",  "data": {"z":1,"a":[1, 2]} }';

    test("accepts the byte-identical body and hands the parsed payload to the handler", async () => {
      const s = await setup();
      const response = await s.adapter.post(s.bytes(body), {
        "content-type": "application/json",
        ...s.signed(body),
      });
      expect(response.status).toBe(200);
      expect(s.calls).toHaveLength(1);
      expect(s.calls[0]).toMatchObject({
        id: "msg_1",
        source: "app",
        payload: { type: "order.created", data: { z: 1, a: [1, 2] } },
      });
      expect(Buffer.from(s.calls[0]!.body).toString()).toBe(body);
    });

    test("rejects re-serialised JSON with 401 SIGNATURE_INVALID", async () => {
      const s = await setup();
      const reserialised = JSON.stringify(JSON.parse(body));
      const response = await s.adapter.post(s.bytes(reserialised), {
        "content-type": "application/json",
        ...s.signed(body),
      });
      expect(response.status).toBe(401);
      expect(await errorCode(response)).toBe("SIGNATURE_INVALID");
      expect(s.calls).toHaveLength(0);
    });

    test("verifies a body with a BOM and non-UTF-8 bytes over its bytes", async () => {
      const s = await setup();
      const raw = new Uint8Array([0xef, 0xbb, 0xbf, ...s.bytes('{"a":1}')]);
      const response = await s.adapter.post(raw, { "content-type": "application/json", ...s.signed(raw) });
      expect(response.status).toBe(200);
      const binary = new Uint8Array([0xff, 0xfe, 0x00, 0x41]);
      const tampered = await s.adapter.post(binary, {
        "content-type": "application/octet-stream",
        ...s.signed(binary, { id: "msg_2" }),
      });
      // Authentic but not JSON: verified over the bytes, then refused as a payload, not as a signature.
      expect(tampered.status).toBe(422);
      expect(await errorCode(tampered)).toBe("PAYLOAD_INVALID");
    });

    test.each([
      [
        "a tampered body",
        401,
        "SIGNATURE_INVALID",
        (s: Setup) => [s.bytes(body.replace("1", "2")), s.signed(body)],
      ],
      [
        "a wrong key",
        401,
        "SIGNATURE_INVALID",
        (s: Setup) => [s.bytes(body), s.signed(body, { key: generateSecret() })],
      ],
      [
        "an old timestamp",
        401,
        "TIMESTAMP_OUT_OF_WINDOW",
        (s: Setup) => [s.bytes(body), s.signed(body, { at: T0 - 6 * 60_000 })],
      ],
      [
        "a future timestamp",
        401,
        "TIMESTAMP_OUT_OF_WINDOW",
        (s: Setup) => [s.bytes(body), s.signed(body, { at: T0 + 6 * 60_000 })],
      ],
      [
        "a missing signature",
        400,
        "MISSING_HEADER",
        (s: Setup) => [s.bytes(body), omit(s.signed(body), "webhook-signature")],
      ],
      [
        "a missing id",
        400,
        "MISSING_HEADER",
        (s: Setup) => [s.bytes(body), omit(s.signed(body), "webhook-id")],
      ],
      [
        "a malformed timestamp",
        400,
        "MALFORMED_HEADER",
        (s: Setup) => [s.bytes(body), { ...s.signed(body), "webhook-timestamp": "soon" }],
      ],
      [
        "a millisecond timestamp",
        400,
        "MALFORMED_HEADER",
        (s: Setup) => [s.bytes(body), { ...s.signed(body), "webhook-timestamp": String(T0) }],
      ],
      [
        "a signature of an unknown version only",
        400,
        "MALFORMED_HEADER",
        (s: Setup) => [s.bytes(body), { ...s.signed(body), "webhook-signature": "v9,abc" }],
      ],
    ] as const)("rejects %s with %i %s and never runs the handler", async (_name, status, code, build) => {
      const s = await setup();
      const [bytes, headers] = build(s) as [Uint8Array, Record<string, string>];
      const response = await s.adapter.post(bytes, { "content-type": "application/json", ...headers });
      expect(response.status).toBe(status);
      expect(await errorCode(response)).toBe(code);
      expect(response.text).not.toContain(s.secret.slice(6));
      expect(s.calls).toHaveLength(0);
    });

    test("accepts either secret during a rotation", async () => {
      const s = await setup();
      const withOld = await s.adapter.post(s.bytes(body), {
        "content-type": "application/json",
        ...s.signed(body, { id: "a", key: s.oldSecret }),
      });
      const withNew = await s.adapter.post(s.bytes(body), {
        "content-type": "application/json",
        ...s.signed(body, { id: "b" }),
      });
      expect([withOld.status, withNew.status]).toEqual([200, 200]);
      expect(s.calls.map((c) => c.verifierIndex === 0 && c.keyIndex)).toEqual([1, 0]);
    });

    test("reads header names case-insensitively", async () => {
      const s = await setup();
      const upper = Object.fromEntries(Object.entries(s.signed(body)).map(([k, v]) => [k.toUpperCase(), v]));
      const response = await s.adapter.post(s.bytes(body), { "Content-Type": "application/json", ...upper });
      expect(response.status).toBe(200);
    });

    test("answers a duplicate delivery 200 without running the handler again, and says so", async () => {
      const s = await setup();
      const headers = { "content-type": "application/json", ...s.signed(body) };
      expect((await s.adapter.post(s.bytes(body), headers)).status).toBe(200);
      const again = await s.adapter.post(s.bytes(body), headers);
      expect(again.status).toBe(200);
      expect(again.headers.get("x-postel-duplicate")).toBe("true");
      expect(s.calls).toHaveLength(1);
    });

    test("of concurrent deliveries of one id, exactly one runs the handler", async () => {
      const s = await setup({ slowMs: 100 });
      const headers = { "content-type": "application/json", ...s.signed(body) };
      const responses = await Promise.all(
        Array.from({ length: 5 }, () => s.adapter.post(s.bytes(body), headers)),
      );
      expect(s.calls).toHaveLength(1);
      expect(responses.filter((r) => r.status === 200 && !r.headers.get("x-postel-duplicate"))).toHaveLength(
        1,
      );
      // The others are told to come back later (in flight), never that the webhook was handled.
      for (const r of responses.filter((r) => r.status !== 200)) {
        expect(r.status).toBe(429);
        expect(await errorCode(r)).toBe("DUPLICATE_IN_FLIGHT");
      }
    });

    test("when the handler throws: 500, the record is released, and the retry runs the handler", async () => {
      const s = await setup({ failFirst: 1 });
      const headers = { "content-type": "application/json", ...s.signed(body) };
      const failed = await s.adapter.post(s.bytes(body), headers);
      expect(failed.status).toBe(500);
      expect(await errorCode(failed)).toBe("HANDLER_FAILED");
      expect(failed.text).not.toContain("on purpose");
      const retried = await s.adapter.post(s.bytes(body), headers);
      expect(retried.status).toBe(200);
      expect(retried.headers.get("x-postel-duplicate")).toBeNull();
      expect(s.calls).toHaveLength(2);
    });

    test("refuses an oversized body with 413 before running the handler", async () => {
      const s = await setup({ maxBodyBytes: 1024 });
      const big = JSON.stringify({ blob: "x".repeat(4096) });
      const response = await s.adapter.post(s.bytes(big), {
        "content-type": "application/json",
        ...s.signed(big),
      });
      expect(response.status).toBe(413);
      expect(await errorCode(response)).toBe("PAYLOAD_TOO_LARGE");
      expect(s.calls).toHaveLength(0);
    });

    const preParsedSkip = options.skip?.["pre-parsed"];
    (preParsedSkip ? test.skip : test)(
      preParsedSkip
        ? `fails loudly on a body the framework already parsed (skipped: ${preParsedSkip})`
        : "fails loudly with BODY_ALREADY_PARSED, naming the fix, when the framework parsed the body first",
      async () => {
        const s = await setup({ preParsed: true });
        const response = await s.adapter.post(s.bytes(body), {
          "content-type": "application/json",
          ...s.signed(body),
        });
        expect(response.status).toBe(500);
        expect(await errorCode(response)).toBe("BODY_ALREADY_PARSED");
        expect(JSON.parse(response.text).error.message).toMatch(/raw|before|order|bodyParser|content type/i);
        expect(s.calls).toHaveLength(0);
      },
    );

    describe("with the event catalog (events)", () => {
      const order = { id: "ord_9", email: "Ada@Example.COM" };

      test("hands the handler a declared event: event.type, and event.data as the schema outputs it", async () => {
        const s = await setup({ events: {} });
        const response = await s.adapter.post(...s.event("order.created", order));
        expect(response.status).toBe(200);
        const data = { id: "ord_9", email: "ada@example.com" };
        const timestamp = new Date(T0).toISOString();
        expect(s.calls.map(({ type, data, payload }) => ({ type, data, payload }))).toEqual([
          { type: "order.created", data, payload: { type: "order.created", timestamp, data } },
        ]);
      });

      test("answers 422 PAYLOAD_INVALID to data its type's schema refuses, without calling the handler", async () => {
        const s = await setup({ events: {} });
        const response = await s.adapter.post(...s.event("order.created", { id: 9 }));
        expect(response.status).toBe(422);
        expect(await errorCode(response)).toBe("PAYLOAD_INVALID");
        expect(JSON.parse(response.text).error.message).toContain('"order.created"');
        expect(s.calls).toHaveLength(0);
      });

      test("answers 422 UNKNOWN_EVENT_TYPE to an undeclared type, without calling the handler", async () => {
        const s = await setup({ events: {} });
        const response = await s.adapter.post(...s.event("order.shipped", order));
        expect(response.status).toBe(422);
        expect(await errorCode(response)).toBe("UNKNOWN_EVENT_TYPE");
        expect(s.calls).toHaveLength(0);
      });

      test('answers 200 to an undeclared type with unknownTypes: "acknowledge", without calling the handler', async () => {
        const s = await setup({ events: { unknownTypes: "acknowledge" } });
        const response = await s.adapter.post(...s.event("order.shipped", order));
        expect(response.status).toBe(200);
        expect(JSON.parse(response.text)).toEqual({ ok: true, ignored: true });
        expect(s.calls).toHaveLength(0);
      });
    });

    rawHttpTests({
      body,
      fetchHeadersOnly: options.fetchHeadersOnly ?? false,
      skip: options.skip?.["raw-http"],
      async start() {
        const s = await setup();
        const { url, server } = s.adapter;
        if (url === undefined || server === undefined) {
          throw new Error(
            `runAdapterConformance("${options.name}"): mount() returned no url and server. Return the ` +
              'http.Server it listens on and the URL post() sends to, or skip "raw-http" with a reason.',
          );
        }
        return {
          url,
          server,
          calls: s.calls,
          headers: { "content-type": "application/json", ...s.signed(body) },
        };
      },
    });
  });
}

type Setup = {
  bytes: (s: string) => Uint8Array;
  signed: (
    body: string | Uint8Array,
    opts?: { id?: string; at?: number; key?: string },
  ) => Record<string, string>;
};

function omit(headers: Record<string, string>, name: string): Record<string, string> {
  const { [name]: _removed, ...rest } = headers;
  return rest;
}
