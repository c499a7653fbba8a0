import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, test, vi } from "vitest";
import { ManualClock } from "../src/clock.js";
import type { Keyring } from "../src/credentials/credentials-options.js";
import { ConfigurationError } from "../src/errors.js";
import { Postel } from "../src/postel.js";
import { InMemoryStorage } from "../src/storage/in-memory-storage.js";
import { harness } from "./support/harness.js";

const key = () => new Uint8Array(randomBytes(32));

const issuesOf = (credentials: unknown) => {
  try {
    Postel({ outbound: { storage: InMemoryStorage(), credentials: credentials as never } });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return (error as ConfigurationError).issues.map(({ path, code }) => ({ path, code }));
  }
  return [];
};

describe("outbound.credentials options", () => {
  test("accepts 32-byte keys as bytes, base64 or base64url, a keyring, or encryption off", () => {
    const bytes = randomBytes(32);
    expect(issuesOf({ keys: [{ id: "k1", key: new Uint8Array(bytes) }] })).toEqual([]);
    expect(
      issuesOf({
        keys: [
          { id: "k2", key: bytes.toString("base64") },
          { id: "k1", key: bytes.toString("base64url") },
        ],
      }),
    ).toEqual([]);
    expect(issuesOf({ keyring: { primaryKeyId: "kms-1", key: async () => key() } })).toEqual([]);
    expect(issuesOf({ encryption: "off" })).toEqual([]);
  });

  test("refuses bad keys with stable codes and says how to make one", () => {
    expect(
      issuesOf({
        keys: [
          { id: "k1", key: randomBytes(16).toString("base64") },
          { id: "k 2", key: key() },
          { id: "k1", key: "not base64!" },
        ],
      }),
    ).toEqual([
      { path: "outbound.credentials.keys[0].key", code: "INVALID_ENCRYPTION_KEY" },
      { path: "outbound.credentials.keys[1].id", code: "INVALID_KEY_ID" },
      { path: "outbound.credentials.keys[2].id", code: "DUPLICATE_KEY_ID" },
      { path: "outbound.credentials.keys[2].key", code: "INVALID_ENCRYPTION_KEY" },
    ]);
    expect(() =>
      Postel({ outbound: { storage: InMemoryStorage(), credentials: { keys: [{ id: "k1", key: "x" }] } } }),
    ).toThrow(/a 32-byte key.*openssl rand -base64 32.*\(INVALID_ENCRYPTION_KEY\)/);
    expect(issuesOf({ keys: [] })).toEqual([
      { path: "outbound.credentials.keys", code: "INVALID_ENCRYPTION_KEY" },
    ]);
    expect(issuesOf({ keys: [{ id: "x".repeat(33), key: key() }] })).toEqual([
      { path: "outbound.credentials.keys[0].id", code: "INVALID_KEY_ID" },
    ]);
    expect(issuesOf({ keyring: { primaryKeyId: "k1" } })).toEqual([
      { path: "outbound.credentials.keyring", code: "INVALID_KEYRING" },
    ]);
    expect(issuesOf({ encryption: "on" })).toEqual([
      { path: "outbound.credentials.encryption", code: "INVALID_CREDENTIALS_OPTIONS" },
    ]);
    expect(issuesOf({ keys: [{ id: "k1", key: key() }], encryption: "off" })).toEqual([
      { path: "outbound.credentials", code: "INVALID_CREDENTIALS_OPTIONS" },
    ]);
    expect(issuesOf({ key: key() })).toEqual([
      { path: "outbound.credentials.key", code: "INVALID_CREDENTIALS_OPTIONS" },
      { path: "outbound.credentials", code: "INVALID_CREDENTIALS_OPTIONS" },
    ]);
  });
});

describe("credentials encrypted at rest", () => {
  test("the API, the engine and a 4,096-character header see plain text; storage holds only ciphertext", async () => {
    const h = await harness({ credentials: { keys: [{ id: "k1", key: key() }] } });
    const long = "v".repeat(4_096);
    const endpoint = await h.postel.outbound.endpoints.create({
      url: h.receiver.url("/hook"),
      headers: { Authorization: "Bearer abc-123-xyz", "X-Long": long },
    });
    expect(h.postel.outbound.credentials.encrypted).toBe(true);
    expect(endpoint.headers).toEqual({ Authorization: "Bearer abc-123-xyz", "X-Long": long });
    expect((await h.postel.outbound.endpoints.get(endpoint.id))?.headers["X-Long"]).toBe(long);
    const secret = await h.postel.outbound.endpoints.secret(endpoint.id);
    expect(secret).toMatch(/^whsec_/);
    const raw = (await h.storage.getEndpoint(endpoint.id))!;
    expect(Object.values(raw.headers).every((v) => v.startsWith("pcv1.k1."))).toBe(true);
    expect(raw.secrets[0]!.secret).toMatch(/^pcv1\.k1\./);

    const updated = await h.postel.outbound.endpoints.update(endpoint.id, {
      headers: { "X-New": "new-value" },
    });
    expect(updated.headers).toEqual({ "X-New": "new-value" });
    const rotated = await h.postel.outbound.endpoints.rotateSecret(endpoint.id);
    expect(await h.postel.outbound.endpoints.secret(endpoint.id)).toBe(rotated);
    const stored = (await h.storage.getEndpoint(endpoint.id))!;
    expect(stored.headers["X-New"]).toMatch(/^pcv1\.k1\./);
    expect(stored.secrets.map((s) => s.secret.slice(0, 8))).toEqual(["pcv1.k1.", "pcv1.k1."]);

    await h.postel.outbound.send({ type: "order.created", data: { id: 1 } });
    await h.postel.drain();
    const [request] = h.receiver.requests;
    expect(request?.headers["x-new"]).toBe("new-value");
    // Signed with both secrets during the overlap.
    expect(String(request?.headers["webhook-signature"]).split(" ")).toHaveLength(2);
  });

  test("a KMS keyring is asked for each key once per process, and a failure is asked again", async () => {
    const bytes = key();
    let calls = 0;
    let down = false;
    const keyring: Keyring = {
      primaryKeyId: "kms-1",
      key: async () => {
        calls++;
        if (down) throw new Error("KMS unreachable");
        return bytes;
      },
    };
    const storage = InMemoryStorage();
    const writer = Postel({ outbound: { storage, credentials: { keyring } } });
    for (let i = 0; i < 5; i++)
      await writer.outbound.endpoints.create({ url: `https://example.com/${i}`, headers: { A: "value-a" } });
    expect(calls).toBe(1);
    down = true;
    const reader = Postel({ outbound: { storage, credentials: { keyring } } });
    await expect(reader.outbound.endpoints.list()).rejects.toMatchObject({
      code: "CREDENTIAL_DECRYPT_FAILED",
      message: expect.stringContaining("KMS unreachable"),
    });
    down = false;
    expect((await reader.outbound.endpoints.list()).items).toHaveLength(5);
    const before = calls;
    await reader.outbound.endpoints.list();
    expect(calls).toBe(before);
    await expect(
      Postel({
        outbound: {
          storage,
          credentials: { keyring: { primaryKeyId: "kms-1", key: async () => new Uint8Array(16) } },
        },
      }).outbound.endpoints.create({ url: "https://example.com/x" }),
    ).rejects.toMatchObject({ code: "CREDENTIAL_ENCRYPT_FAILED", cause: { code: "INVALID_ENCRYPTION_KEY" } });
  });

  test("an expired secret that no longer decrypts is left out; a valid one makes the endpoint unreadable", async () => {
    const clock = new ManualClock();
    const storage = InMemoryStorage();
    const postel = Postel({
      clock,
      outbound: { storage, credentials: { keys: [{ id: "k1", key: key() }] } },
    });
    const { id } = await postel.outbound.endpoints.create({ url: "https://example.com/a" });
    const first = (await storage.getEndpoint(id))!.secrets[0]!.secret;
    clock.advance("1s");
    const newest = await postel.outbound.endpoints.rotateSecret(id, { overlap: "1h" });
    const stored = (await storage.getEndpoint(id))!;
    const broken = `${first.slice(0, -10)}${first.at(-10) === "A" ? "B" : "A"}${first.slice(-9)}`;
    const expected = { headers: {}, secrets: stored.secrets.map((s) => s.secret) };
    await storage.credentials.rewriteCredentials(id, expected, {
      headers: {},
      secrets: [expected.secrets[0]!, broken],
    });
    await expect(postel.outbound.endpoints.secret(id)).rejects.toMatchObject({
      code: "CREDENTIAL_DECRYPT_FAILED",
    });
    clock.advance("1h");
    expect(await postel.outbound.endpoints.secret(id)).toBe(newest);
  });

  test("reencrypt() needs keys and the storage's credentials capability, and checks its options", async () => {
    const plain = Postel({ outbound: { storage: InMemoryStorage() } });
    expect(plain.outbound.credentials.encrypted).toBe(false);
    await expect(plain.outbound.credentials.reencrypt()).rejects.toMatchObject({
      code: "ENCRYPTION_NOT_CONFIGURED",
    });
    const { credentials: _rewrites, ...withoutRewrites } = InMemoryStorage();
    const keys = { keys: [{ id: "k1", key: key() }] };
    const postel = Postel({ outbound: { storage: withoutRewrites, credentials: keys } });
    await expect(postel.outbound.credentials.reencrypt()).rejects.toMatchObject({
      code: "CREDENTIAL_REWRITE_UNSUPPORTED",
    });
    const full = Postel({ outbound: { storage: InMemoryStorage(), credentials: keys } });
    for (const batchSize of [0, 1.5, 1_001]) {
      await expect(full.outbound.credentials.reencrypt({ batchSize })).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
      });
    }
  });
});

describe("the plain-text warning", () => {
  const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
  afterEach(() => warn.mockClear());

  // A fresh copy of core each time: the warning is once per process (per module instance).
  const freshCore = async () => {
    vi.resetModules();
    return import("../src/index.js");
  };

  test("is printed once per process, at start-up (start or drain), never by Postel() alone", async () => {
    const core = await freshCore();
    const a = core.Postel({ outbound: { storage: core.InMemoryStorage() } });
    const b = core.Postel({ outbound: { storage: core.InMemoryStorage() } });
    expect(warn).not.toHaveBeenCalled();
    await a.drain();
    await b.start();
    await b.stop();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]?.[0])).toMatch(
      /plain text.*outbound\.credentials: \{ keys.*encryption: "off"/,
    );
  });

  test("is not printed with keys or with encryption off", async () => {
    const core = await freshCore();
    await core
      .Postel({ outbound: { storage: core.InMemoryStorage(), credentials: { encryption: "off" } } })
      .drain();
    await core
      .Postel({
        outbound: { storage: core.InMemoryStorage(), credentials: { keys: [{ id: "k1", key: key() }] } },
      })
      .drain();
    expect(warn).not.toHaveBeenCalled();
  });
});

describe("response snippets", () => {
  test("hold no custom header value when a receiver echoes the request, raw, JSON or base64", async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        const auth = String(req.headers["authorization"]);
        res.writeHead(req.url === "/fail" ? 500 : 200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            headers: req.headers,
            raw: `Authorization: ${auth}`,
            b64: Buffer.from(auth).toString("base64"),
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const token = `Bearer ${randomBytes(18).toString("base64url")}`;
      const h = await harness({ credentials: { keys: [{ id: "k1", key: key() }] } });
      for (const path of ["/ok", "/fail"]) {
        await h.postel.outbound.endpoints.create({
          url: `http://127.0.0.1:${port}${path}`,
          headers: { Authorization: token, "X-Api-Key": "key-12345678" },
        });
      }
      const { id } = await h.postel.outbound.send({ type: "order.created", data: {} });
      await h.postel.drain();
      const attempts = await h.postel.outbound.messages.attempts(id);
      expect(attempts.map((a) => a.statusCode).sort()).toEqual([200, 500]);
      for (const attempt of attempts) {
        const snippet = attempt.responseSnippet ?? "";
        expect(snippet).toContain("[redacted]");
        expect(snippet).toContain("webhook-id");
        for (const hidden of [token, token.slice(7), "key-12345678", Buffer.from(token).toString("base64")]) {
          expect(snippet).not.toContain(hidden);
        }
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
