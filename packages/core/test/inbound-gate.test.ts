import { describe, expect, test } from "vitest";
import { ConfigurationError } from "../src/errors.js";
import { Receiver } from "../src/inbound.js";
import { Postel } from "../src/postel.js";
import { runAdapterConformance } from "../src/testing/run-adapter-conformance.js";

// The gate itself, driven with bare bytes (no framework): the same suite every adapter runs.
runAdapterConformance({
  name: "core gate (no framework)",
  mount: async (receiver, source, handler) => ({
    async post(body, headers) {
      const response = await receiver.handle(source, { body, headers }, handler);
      return { status: response.status, headers: new Headers(response.headers), text: response.body };
    },
    close: async () => {},
  }),
  skip: {
    "pre-parsed": "no framework here: nothing can parse the body before the gate",
    "raw-http": "called in process, no socket: the adapters send raw HTTP",
  },
});

describe("inbound configuration", () => {
  test("lists every bad source option in one ConfigurationError", () => {
    let error: unknown;
    try {
      Receiver({
        sources: {
          a: { verify: [] },
          b: { verify: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", tolerance: "soon" as never },
          c: { verify: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", parse: "xml" as never, dedup: {} as never },
        },
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).issues.map((i) => i.path).sort()).toEqual([
      "inbound.a.verify",
      "inbound.b.tolerance",
      "inbound.c.dedup",
      "inbound.c.parse",
    ]);
  });

  test.each([
    ["whsec_abc=", "2 bytes"],
    ["abc", "2 bytes"],
    ["whsec_QQ==", "1 byte"],
    [["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_c2hvcnQ="], "5 bytes"],
  ])("refuses a receiving secret shorter than 24 bytes (%j)", (verify, decoded) => {
    let error: unknown;
    try {
      Receiver({ sources: { pay: { verify } } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    const [issue] = (error as ConfigurationError).issues;
    expect(issue?.path).toBe("inbound.pay.verify");
    expect(issue?.message).toContain(`decodes to ${decoded}`);
    expect(issue?.message).toMatch(/at least 24 random bytes/);
  });

  test("Postel({ inbound }) exposes the receiver; an unknown source is a coded 500, not a crash", async () => {
    const postel = Postel({ inbound: { billing: { verify: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" } } });
    const response = await postel.inbound.handle(
      "nope" as "billing",
      { body: new Uint8Array(), headers: {} },
      () => {},
    );
    expect(response.status).toBe(500);
    expect(response.headers["x-postel-error"]).toBe("UNKNOWN_SOURCE");
    expect(() => postel.outbound).toThrow(/outbound.*is not configured/);
  });

  test("a schema failure is 422 PAYLOAD_INVALID with the path", async () => {
    const { sign } = await import("@postel/signing");
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const schema = {
      "~standard": {
        version: 1 as const,
        vendor: "test",
        validate: (value: unknown) =>
          typeof (value as { amount?: unknown }).amount === "number"
            ? { value }
            : { issues: [{ message: "expected a number", path: ["amount"] }] },
      },
    };
    const receiver = Receiver({ sources: { pay: { verify: secret, schema } } });
    const body = '{"amount":"12"}';
    const headers = sign({ id: "m1", timestamp: new Date(), body, keys: [secret] });
    const response = await receiver.handle(
      "pay",
      { body: new TextEncoder().encode(body), headers },
      () => {},
    );
    expect(response.status).toBe(422);
    expect(JSON.parse(response.body).error.message).toContain("amount: expected a number");
  });

  test("never throws when the dedup store fails: 503 DEDUP_UNAVAILABLE, and the handler does not run", async () => {
    const { sign } = await import("@postel/signing");
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const failing = {
      claim: () => Promise.reject(new Error("database is down")),
      complete: () => Promise.resolve(),
      release: () => Promise.resolve(),
    };
    const receiver = Receiver({ sources: { pay: { verify: secret, dedup: failing } } });
    const body = new TextEncoder().encode("{}");
    const headers = sign({ id: "m1", timestamp: new Date(), body, keys: [secret] });
    let ran = false;
    const response = await receiver.handle("pay", { body, headers }, () => {
      ran = true;
    });
    expect(response.status).toBe(503);
    expect(response.headers["x-postel-error"]).toBe("DEDUP_UNAVAILABLE");
    expect(response.headers["retry-after"]).toBe("5");
    expect(ran).toBe(false);
  });
});
