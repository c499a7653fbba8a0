import type { IncomingHttpHeaders } from "node:http";
import { describe, expect, test } from "vitest";
import { WebhookVerificationError } from "./errors.js";
import { readHeader, requireHeader } from "./headers.js";

describe("readHeader", () => {
  test("finds a header in a plain record whatever its capitalisation", () => {
    expect(readHeader({ "Webhook-Id": "msg_1" }, "webhook-id")).toBe("msg_1");
    expect(readHeader({ "webhook-id": "msg_1" }, "WEBHOOK-ID")).toBe("msg_1");
  });

  test("reads a fetch Headers object", () => {
    expect(readHeader(new Headers({ "Webhook-Id": "msg_1" }), "webhook-id")).toBe("msg_1");
  });

  test("returns undefined for an absent header and an empty array", () => {
    expect(readHeader({}, "webhook-id")).toBeUndefined();
    expect(readHeader({ "webhook-id": [] }, "webhook-id")).toBeUndefined();
    expect(readHeader(new Headers(), "webhook-id")).toBeUndefined();
  });

  test("joins a header repeated by a proxy with the given separator", () => {
    const headers: IncomingHttpHeaders = { "webhook-signature": ["v1,a", "v1,b"] };
    expect(readHeader(headers, "webhook-signature", { join: " " })).toBe("v1,a v1,b");
  });

  test("collapses identical repeated values", () => {
    expect(readHeader({ "webhook-id": ["msg_1", "msg_1"] }, "webhook-id")).toBe("msg_1");
  });

  test("refuses repeated values that disagree", () => {
    const read = () => readHeader({ "webhook-id": ["msg_1", "msg_2"] }, "webhook-id");
    expect(read).toThrow(WebhookVerificationError);
    expect(read).toThrow(expect.objectContaining({ code: "MALFORMED_HEADER", header: "webhook-id" }));
  });

  test("treats keys that differ only in case as the same header", () => {
    expect(() => readHeader({ "Webhook-Id": "msg_1", "webhook-id": "msg_2" }, "webhook-id")).toThrow(
      /sent 2 times/,
    );
  });

  test("does not mistake a header called get for a fetch Headers object", () => {
    expect(readHeader({ get: "yes" }, "get")).toBe("yes");
  });
});

describe("requireHeader", () => {
  test("throws MISSING_HEADER naming the header when it is absent or blank", () => {
    for (const headers of [{}, { "webhook-id": "  " }]) {
      expect(() => requireHeader(headers, "Webhook-Id")).toThrow(
        expect.objectContaining({ code: "MISSING_HEADER", header: "webhook-id" }),
      );
    }
  });
});
