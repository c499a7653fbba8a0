import { readHeader } from "../headers.js";
import { describe, expect, test } from "vitest";
import { distinctHeaders } from "./distinct-headers.js";

describe("distinctHeaders", () => {
  test("keeps a header sent once as a string and every copy of a repeated one, in order", () => {
    const headers = distinctHeaders({
      rawHeaders: [
        "Webhook-Id",
        "msg_1",
        "webhook-signature",
        "v1,a",
        "WEBHOOK-SIGNATURE",
        "v1,b",
        "Host",
        "x",
      ],
    });
    expect({ ...headers }).toEqual({
      "webhook-id": "msg_1",
      "webhook-signature": ["v1,a", "v1,b"],
      host: "x",
    });
    expect(readHeader(headers, "webhook-signature", { join: " " })).toBe("v1,a v1,b");
  });

  test("keeps copies that Node's headers would join or drop, so readHeader can refuse them", () => {
    const headers = distinctHeaders({
      rawHeaders: [
        "content-type",
        "application/json",
        "content-type",
        "text/plain",
        "x-n",
        "1",
        "x-n",
        "1",
        "x-n",
        "1",
      ],
    });
    expect(headers["content-type"]).toEqual(["application/json", "text/plain"]);
    expect(readHeader(headers, "x-n")).toBe("1");
    expect(() => readHeader(headers, "content-type")).toThrow(
      expect.objectContaining({ code: "MALFORMED_HEADER" }),
    );
  });

  test("treats a header named __proto__ as a header", () => {
    const headers = distinctHeaders({ rawHeaders: ["__proto__", "a", "__proto__", "b", "x", "1"] });
    expect(Object.getPrototypeOf(headers)).toBeNull();
    expect(Object.entries(headers)).toEqual([
      ["__proto__", ["a", "b"]],
      ["x", "1"],
    ]);
    expect(readHeader(headers, "x")).toBe("1");
  });
});
