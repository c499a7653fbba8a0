import { describe, expect, test } from "vitest";
import { slack } from "./slack.js";

const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const T = 1531420618;
const NOW = T * 1000;
const body = Buffer.from("token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&command=%2Fweather");

describe("slack", () => {
  test("verifies a v0 signature over v0:timestamp:body and reports the timestamp", () => {
    const headers = slack.sign({ signingSecret: SECRET, timestamp: T, body });
    expect(slack({ signingSecret: SECRET }).verify({ body, headers }, NOW)).toEqual({
      scheme: "slack",
      id: undefined,
      timestamp: new Date(NOW),
      keyIndex: 0,
    });
  });

  test("rejects a signature whose timestamp header was altered", () => {
    const headers = {
      ...slack.sign({ signingSecret: SECRET, timestamp: T, body }),
      "x-slack-request-timestamp": "1531420619",
    };
    expect(() => slack({ signingSecret: SECRET }).verify({ body, headers }, NOW)).toThrow(
      expect.objectContaining({ code: "SIGNATURE_INVALID" }),
    );
  });

  test("enforces 5 minutes either side", () => {
    const headers = slack.sign({ signingSecret: SECRET, timestamp: T, body });
    const verifier = slack({ signingSecret: SECRET });
    expect(verifier.verify({ body, headers }, NOW - 300_000).keyIndex).toBe(0);
    expect(() => verifier.verify({ body, headers }, NOW + 301_000)).toThrow(
      expect.objectContaining({ code: "TIMESTAMP_OUT_OF_WINDOW", header: "x-slack-request-timestamp" }),
    );
  });

  test("reports which signing secret matched during a rotation", () => {
    const headers = slack.sign({ signingSecret: SECRET, timestamp: T, body });
    expect(slack({ signingSecrets: ["old", SECRET] }).verify({ body, headers }, NOW).keyIndex).toBe(1);
  });

  test("rejects a signature without the v0= prefix as MALFORMED_HEADER", () => {
    const headers = { "x-slack-signature": "v1=abc", "x-slack-request-timestamp": String(T) };
    expect(() => slack({ signingSecret: SECRET }).verify({ body, headers }, NOW)).toThrow(
      expect.objectContaining({ code: "MALFORMED_HEADER" }),
    );
  });

  test("rejects a request without a timestamp as MISSING_HEADER", () => {
    const headers = { "x-slack-signature": "v0=abc" };
    expect(() => slack({ signingSecret: SECRET }).verify({ body, headers }, NOW)).toThrow(
      expect.objectContaining({ code: "MISSING_HEADER", header: "x-slack-request-timestamp" }),
    );
  });
});
