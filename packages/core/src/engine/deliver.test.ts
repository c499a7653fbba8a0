import { describe, expect, it } from "vitest";
import type { MessageRecord } from "../storage/records.js";
import { canonicalBody, isoTimestamp } from "./deliver.js";

describe("isoTimestamp", () => {
  it("matches Date#toISOString across milliseconds, seconds, days and the edges of its fast path", () => {
    const start = Date.UTC(2026, 11, 31, 23, 59, 58, 990);
    const samples = [
      ...Array.from({ length: 3_000 }, (_, i) => start + i),
      0,
      1,
      999,
      1_000,
      -1,
      -86_400_001,
      1.5,
      253_402_300_799_999,
      253_402_300_800_000,
      8.64e15,
    ];
    for (const ms of samples) expect(isoTimestamp(ms), String(ms)).toBe(new Date(ms).toISOString());
  });
});

describe("canonicalBody", () => {
  it("is the Standard Webhooks frame, parseable, with data spliced in byte for byte", () => {
    const message = {
      type: 'order."created"\u2028',
      createdAt: Date.UTC(2026, 10, 30, 12, 0, 0, 7),
      payload: '{"b":1,  "a":[1.50, "\\u00e9"]}',
    } as MessageRecord;
    const body = canonicalBody(message);
    expect(body).toBe(
      `{"type":${JSON.stringify(message.type)},"timestamp":"2026-11-30T12:00:00.007Z","data":${message.payload}}`,
    );
    expect(JSON.parse(body)).toEqual({
      type: message.type,
      timestamp: "2026-11-30T12:00:00.007Z",
      data: JSON.parse(message.payload),
    });
  });
});
