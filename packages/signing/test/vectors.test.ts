import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { github, sign, slack, verify } from "../src/index.js";

// Published examples, kept as data so they can be compared with the documentation line by line.
function vector<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(`./vectors/${name}.json`, import.meta.url), "utf8")) as T;
}

describe("Standard Webhooks specification example", () => {
  const v = vector<{ secret: string; id: string; timestamp: number; body: string; signature: string }>(
    "standard-webhooks",
  );
  const headers = {
    "webhook-id": v.id,
    "webhook-timestamp": String(v.timestamp),
    "webhook-signature": v.signature,
  };

  test("signs to the published signature", () => {
    expect(sign({ id: v.id, timestamp: v.timestamp, body: v.body, keys: v.secret })).toEqual(headers);
  });

  test("verifies the published signature at its own timestamp", () => {
    expect(verify(v.body, headers, { keys: v.secret, now: new Date(v.timestamp * 1000) }).id).toBe(v.id);
  });

  test("rejects the published signature against a body that differs by one character", () => {
    expect(() =>
      verify(v.body.replace("2432232314", "2432232315"), headers, {
        keys: v.secret,
        now: new Date(v.timestamp * 1000),
      }),
    ).toThrow(expect.objectContaining({ code: "SIGNATURE_INVALID" }));
  });
});

describe("GitHub documentation example", () => {
  const v = vector<{ secret: string; body: string; signature: string }>("github");

  test("signs to the published signature", () => {
    expect(github.sign({ secret: v.secret, body: v.body })).toEqual({ "x-hub-signature-256": v.signature });
  });

  test("verifies the published signature", () => {
    const request = { body: Buffer.from(v.body), headers: { "X-Hub-Signature-256": v.signature } };
    expect(github({ secret: v.secret }).verify(request, 0).keyIndex).toBe(0);
  });
});

describe("Slack documentation example", () => {
  const v = vector<{ signingSecret: string; timestamp: number; body: string; signature: string }>("slack");

  test("signs to the published signature", () => {
    expect(slack.sign({ signingSecret: v.signingSecret, timestamp: v.timestamp, body: v.body })).toEqual({
      "x-slack-signature": v.signature,
      "x-slack-request-timestamp": String(v.timestamp),
    });
  });

  test("verifies the published signature at its own timestamp", () => {
    const headers = { "X-Slack-Signature": v.signature, "X-Slack-Request-Timestamp": String(v.timestamp) };
    const request = { body: Buffer.from(v.body), headers };
    expect(slack({ signingSecret: v.signingSecret }).verify(request, v.timestamp * 1000).keyIndex).toBe(0);
  });
});
