import { generateSecret } from "@postel/signing";
import { expect } from "vitest";
import { ManualClock } from "../../clock.js";
import type { PostelEventMap } from "../../engine/events.js";
import type { StoredCredentials } from "../../storage/credentials-store.js";
import type { EndpointRecord } from "../../storage/records.js";
import { findSecret } from "../find-secret.js";
import { type AtRestContext, group, newKey } from "./context.js";

const stored = (record: EndpointRecord): StoredCredentials => ({
  headers: { ...record.headers },
  secrets: record.secrets.map((s) => s.secret),
});
const failed = (endpointId: string) => ({ code: "CREDENTIAL_DECRYPT_FAILED", endpointId });

/** Proof of issue 28: a stored value moved or altered is refused, never read as another plaintext. */
export function tamperTests(context: AtRestContext): void {
  group(context, "tamper", (test) => {
    test("a ciphertext copied to another endpoint or header, or altered, fails with CREDENTIAL_DECRYPT_FAILED, never a wrong plaintext", async () => {
      const storage = context.storage();
      const postel = context.postel({ keys: [newKey("k1")] });
      const [sa, sb] = [generateSecret(), generateSecret()];
      const headers = { "X-One": "first-header-value", "X-Two": "second-header-value" };
      const a = await postel.outbound.endpoints.create({ url: "http://127.0.0.1:9/a", secret: sa, headers });
      const b = await postel.outbound.endpoints.create({ url: "http://127.0.0.1:9/b", secret: sb, headers });
      // Read once, so decrypted values are cached: the cache must not answer for a moved value.
      expect(await postel.outbound.endpoints.secret(a.id)).toBe(sa);
      expect((await postel.outbound.endpoints.get(b.id))?.headers).toEqual(headers);
      const ra = (await storage.getEndpoint(a.id))!;
      const rb = (await storage.getEndpoint(b.id))!;
      const original = stored(ra);
      const store = storage.credentials!;
      const tampered: StoredCredentials[] = [
        // B's secret in A's row.
        { ...original, secrets: [rb.secrets[0]!.secret] },
        // B's X-One in A's X-One (same header name, another endpoint).
        { ...original, headers: { ...original.headers, "X-One": rb.headers["X-One"]! } },
        // A's two headers swapped.
        {
          ...original,
          headers: { "X-One": original.headers["X-Two"]!, "X-Two": original.headers["X-One"]! },
        },
        // One character of the ciphertext changed.
        { ...original, secrets: [flipLast(original.secrets[0]!)] },
      ];
      for (const values of tampered) {
        expect(await store.rewriteCredentials(a.id, original, values)).toBe(true);
        await expect(postel.outbound.endpoints.secret(a.id)).rejects.toMatchObject(failed(a.id));
        await expect(postel.outbound.endpoints.get(a.id)).rejects.toMatchObject(failed(a.id));
        await expect(postel.outbound.endpoints.list()).rejects.toMatchObject(failed(a.id));
        const error = await postel.outbound.endpoints.secret(a.id).catch((e: unknown) => e);
        for (const value of [sa, sb, ...Object.values(headers)]) expect(findSecret(error, value)).toEqual([]);
        expect(await postel.outbound.endpoints.secret(b.id)).toBe(sb);
        expect(await store.rewriteCredentials(a.id, values, original)).toBe(true);
        expect(await postel.outbound.endpoints.secret(a.id)).toBe(sa);
      }
      // An endpoint that cannot be read can still be deleted.
      expect(await store.rewriteCredentials(a.id, original, tampered[0]!)).toBe(true);
      await postel.outbound.endpoints.delete(a.id);
      expect(await postel.outbound.endpoints.get(a.id)).toBeNull();
    });

    test("an instance without the key, or without any key, refuses the endpoint rather than use its ciphertext", async () => {
      const postel = context.postel({ keys: [newKey("k1")] });
      const { id } = await postel.outbound.endpoints.create({
        url: "http://127.0.0.1:9/a",
        headers: { "X-Key": "value-1234" },
      });
      const otherKey = context.postel({ keys: [newKey("k9")] });
      await expect(otherKey.outbound.endpoints.secret(id)).rejects.toMatchObject({
        ...failed(id),
        message: expect.stringContaining('key "k1"'),
      });
      const noKey = context.postel({ encryption: "off" });
      await expect(noKey.outbound.endpoints.get(id)).rejects.toMatchObject({
        ...failed(id),
        message: expect.stringContaining("has no keys"),
      });
    });

    test("the drain never sends to an endpoint whose credentials do not decrypt, keeps its deliveries, and sends them once fixed", async () => {
      const storage = context.storage();
      const receiver = await context.receiver();
      const clock = new ManualClock(Date.now());
      const postel = context.postel({ keys: [newKey("k1")] }, {}, clock);
      const errors: PostelEventMap["error"][] = [];
      postel.on("error", (error) => errors.push(error));
      const secrets = { a: generateSecret(), b: generateSecret() };
      const ids: Record<string, string> = {};
      for (const name of ["a", "b"] as const) {
        receiver.trust(`/${name}`, secrets[name]);
        const endpoint = await postel.outbound.endpoints.create({
          url: receiver.url(`/${name}`),
          types: [`tamper.${name}`],
          secret: secrets[name],
        });
        ids[name] = endpoint.id;
      }
      const ra = (await storage.getEndpoint(ids["a"]!))!;
      const rb = (await storage.getEndpoint(ids["b"]!))!;
      const moved = { ...stored(ra), secrets: [rb.secrets[0]!.secret] };
      await storage.credentials!.rewriteCredentials(ra.id, stored(ra), moved);

      const toA = await postel.outbound.send({ type: "tamper.a", data: {} });
      const toB = await postel.outbound.send({ type: "tamper.b", data: {} });
      await postel.drain();
      expect([...receiver.received.keys()]).toEqual([`/b ${toB.id}`]);
      expect(receiver.invalid).toEqual([]);
      expect(errors.map((e) => (e.error as { code?: string }).code)).toContain("CREDENTIAL_DECRYPT_FAILED");
      const [held] = await storage.listDeliveries(toA.id);
      expect(held).toMatchObject({ status: "pending", attemptsMade: 0, retriesUsed: 0 });

      await storage.credentials!.rewriteCredentials(ra.id, moved, stored(ra));
      clock.advance("61s");
      await postel.drain();
      expect(receiver.received.get(`/a ${toA.id}`)).toBe(1);
      expect(receiver.received.get(`/b ${toB.id}`)).toBe(1);
      expect(receiver.invalid).toEqual([]);
    });
  });
}

/** The stored value with one character of its authentication tag replaced by another. */
function flipLast(value: string): string {
  const at = value.length - 8;
  return value.slice(0, at) + (value[at] === "A" ? "B" : "A") + value.slice(at + 1);
}
