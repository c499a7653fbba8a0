import { describe, expect, test } from "vitest";
import { github } from "./github.js";

const SECRET = "It's a Secret to Everybody";
const body = Buffer.from("Hello, World!");

describe("github", () => {
  test("verifies the signature and reports X-GitHub-Delivery as the id", () => {
    const headers = { ...github.sign({ secret: SECRET, body }), "X-GitHub-Delivery": "72d3162e-cc78-11e3" };
    expect(github({ secret: SECRET }).verify({ body, headers }, 0)).toEqual({
      scheme: "github",
      id: "72d3162e-cc78-11e3",
      timestamp: undefined,
      keyIndex: 0,
    });
  });

  test("ignores the clock, since GitHub signs no timestamp", () => {
    const headers = github.sign({ secret: SECRET, body });
    expect(github({ secret: SECRET }).verify({ body, headers }, Number.MAX_SAFE_INTEGER).keyIndex).toBe(0);
  });

  test("reports which secret matched during a rotation", () => {
    const headers = github.sign({ secret: SECRET, body });
    expect(github({ secrets: ["old", SECRET] }).verify({ body, headers }, 0).keyIndex).toBe(1);
  });

  test("rejects a different body and a different secret", () => {
    const headers = github.sign({ secret: SECRET, body });
    const verifier = github({ secret: "another secret" });
    expect(() => verifier.verify({ body, headers }, 0)).toThrow(
      expect.objectContaining({ code: "SIGNATURE_INVALID" }),
    );
    expect(() =>
      github({ secret: SECRET }).verify({ body: Buffer.from("Hello, World"), headers }, 0),
    ).toThrow(expect.objectContaining({ code: "SIGNATURE_INVALID" }));
  });

  test("rejects an uppercase-hex or truncated signature", () => {
    const signature = github.sign({ secret: SECRET, body })["x-hub-signature-256"];
    for (const value of [`sha256=${signature.slice(7).toUpperCase()}`, signature.slice(0, -2)]) {
      expect(() =>
        github({ secret: SECRET }).verify({ body, headers: { "x-hub-signature-256": value } }, 0),
      ).toThrow(expect.objectContaining({ code: "SIGNATURE_INVALID" }));
    }
  });

  test("rejects a legacy sha1= value as MALFORMED_HEADER and a missing header as MISSING_HEADER", () => {
    const verifier = github({ secret: SECRET });
    expect(() => verifier.verify({ body, headers: { "x-hub-signature-256": "sha1=abc" } }, 0)).toThrow(
      expect.objectContaining({ code: "MALFORMED_HEADER" }),
    );
    expect(() => verifier.verify({ body, headers: { "x-hub-signature": "sha1=abc" } }, 0)).toThrow(
      expect.objectContaining({ code: "MISSING_HEADER", header: "x-hub-signature-256" }),
    );
  });
});
