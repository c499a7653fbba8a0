import { describe, expect, test } from "vitest";
import { REDACTED, snippetRedactor } from "./redact-snippet.js";

const token = "Bearer s3cr3t-T0ken/with+chars";
const redact = snippetRedactor({ Authorization: token, "X-Short": "no", "X-Team": "billing team" })!;
const b64 = (text: string, prefix = "") =>
  Buffer.from(prefix + text)
    .toString("base64")
    .slice(Math.ceil((prefix.length * 8) / 6), -4);

describe("redacting custom header values from response snippets", () => {
  test.each([
    ["raw", `echo: ${token}!`],
    ["JSON-escaped", JSON.stringify({ headers: { authorization: token } })],
    ["URL-encoded", `GET /?h=${encodeURIComponent(token)}`],
    ["form-encoded", `h=${encodeURIComponent(token).replaceAll("%20", "+")}`],
    ["base64", Buffer.from(token).toString("base64")],
    ["base64url", Buffer.from(token).toString("base64url")],
    ["base64 at offset 1 inside a longer text", Buffer.from(`x${token}yz`).toString("base64")],
    ["base64 at offset 2 inside a longer text", Buffer.from(`ab${token}`).toString("base64")],
  ])("hides the %s form", (_form, snippet) => {
    const out = redact(snippet);
    expect(out).toContain(REDACTED);
    expect(out).not.toContain("s3cr3t");
    expect(out).not.toContain(b64("s3cr3t-T0ken"));
  });

  test("hides a value the snippet was cut off in, and every occurrence", () => {
    expect(redact(`ok ${token.slice(0, 12)}`)).toBe(`ok ${REDACTED}`);
    expect(redact(`${token} and ${token}`)).toBe(`${REDACTED} and ${REDACTED}`);
    expect(redact("billing team: billing team")).toBe(`${REDACTED}: ${REDACTED}`);
  });

  test("leaves other text, and values shorter than 4 characters, alone", () => {
    expect(redact('{"ok":true,"note":"no"}')).toBe('{"ok":true,"note":"no"}');
    expect(redact("Bearer")).toBe("Bearer");
  });

  test("is null for an endpoint without a header worth hiding", () => {
    expect(snippetRedactor({})).toBeNull();
    expect(snippetRedactor({ "X-A": "abc" })).toBeNull();
  });
});
