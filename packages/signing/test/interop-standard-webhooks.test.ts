import { Webhook } from "standardwebhooks";
import { describe, expect, test } from "vitest";
import { generateSecret, sign, verify } from "../src/index.js";

// standardwebhooks@1.1.1 (the reference JavaScript library) reads the real clock, so these tests
// sign at the current time rather than injecting one.
const body = '{"type":"invoice.paid","timestamp":"2024-01-01T00:00:00Z","data":{"amount":4200,"name":"Zoë"}}';

describe("interoperability with standardwebhooks@1.1.1 (v1)", () => {
  test("the reference library verifies what we sign", () => {
    const secret = generateSecret();
    const headers = sign({ id: "msg_ours", timestamp: new Date(), body, keys: secret });
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  test("the reference library verifies our rotation header signed with two secrets", () => {
    const [old, current] = [generateSecret(), generateSecret()];
    const headers = sign({ id: "msg_rotating", timestamp: new Date(), body, keys: [old, current] });
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(old).verify(body, headers)).toEqual(JSON.parse(body));
  });

  test("we verify what the reference library signs", () => {
    const secret = generateSecret();
    const timestamp = new Date();
    const signature = new Webhook(secret).sign("msg_theirs", timestamp, body);
    const headers = {
      "webhook-id": "msg_theirs",
      "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
      "webhook-signature": signature,
    };
    expect(verify(Buffer.from(body), headers, { keys: secret }).id).toBe("msg_theirs");
  });

  test("a bare base64 secret means the same key to both libraries", () => {
    const bare = generateSecret().slice("whsec_".length);
    const headers = sign({ id: "msg_bare", timestamp: new Date(), body, keys: bare });
    expect(new Webhook(`whsec_${bare}`).verify(body, headers)).toEqual(JSON.parse(body));
  });

  test("the reference library rejects our signature over a different body", () => {
    const secret = generateSecret();
    const headers = sign({ id: "msg_ours", timestamp: new Date(), body, keys: secret });
    expect(() => new Webhook(secret).verify(body.replace("4200", "4201"), headers)).toThrow(
      /No matching signature/,
    );
  });

  test("documents a known divergence: the reference library decodes a Buffer body as UTF-8 before hashing", () => {
    // We hash bytes; standardwebhooks@1.1.1 calls payload.toString(), which replaces 0xff 0xfe with
    // U+FFFD. On bodies that are not valid UTF-8 the two libraries therefore disagree; on every
    // valid UTF-8 body (all JSON) they agree, as the tests above show.
    const secret = generateSecret();
    const bytes = Buffer.from([0xff, 0xfe, 0x7b, 0x7d]);
    const headers = sign({ id: "msg_bytes", timestamp: new Date(), body: bytes, keys: secret });
    expect(verify(bytes, headers, { keys: secret }).id).toBe("msg_bytes");
    expect(() => new Webhook(secret).verify(bytes, headers)).toThrow(/No matching signature/);
  });
});
