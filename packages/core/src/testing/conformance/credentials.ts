import { expect } from "vitest";
import type { CredentialStore, StoredCredentials } from "../../storage/credentials-store.js";
import type { EndpointRecord } from "../../storage/records.js";
import type { Storage } from "../../storage/storage.js";
import { type ConformanceContext, group } from "./context.js";
import { newEndpoint, T0 } from "./fixtures.js";

/** An endpoint with three headers (one named like an array index, which JSON sorts first) and two secrets. */
function endpointWithCredentials(): EndpointRecord {
  return newEndpoint({
    headers: { Authorization: "Bearer old-token", "x-team": "billing", "1": "one" },
    secrets: [
      { secret: "whsec_bmV3ZXN0LXNlY3JldC0xMjM0NTY3ODkw", createdAt: T0 + 5, expiresAt: null },
      { secret: "whsec_b2xkZXItc2VjcmV0LTEyMzQ1Njc4OTA=", createdAt: T0, expiresAt: T0 + 86_400_000 },
    ],
  });
}

function storedOf(record: EndpointRecord): StoredCredentials {
  return { headers: { ...record.headers }, secrets: record.secrets.map((s) => s.secret) };
}

/** What a re-encryption writes: every value replaced, names and order kept. */
function rewritten(stored: StoredCredentials, tag: string): StoredCredentials {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(stored.headers)) headers[name] = `${tag}.${value}`;
  return { headers, secrets: stored.secrets.map((secret) => `${tag}.${secret}`) };
}

/** The optional credential rewrites (`Storage.credentials`): compare-and-set of stored values. */
export function credentialTests(context: ConformanceContext): void {
  const credentials = (): CredentialStore => context.storage().credentials!;
  const missing = (storage: Storage<unknown>) =>
    storage.credentials === undefined
      ? `the ${storage.name} storage has no credentials (an optional capability)`
      : undefined;

  group(
    context,
    "credentials",
    (test) => {
      test("rewrites header values and secrets in place when they are the expected ones, touching nothing else", async () => {
        const storage = context.storage();
        const endpoint = endpointWithCredentials();
        const other = endpointWithCredentials();
        await storage.createEndpoint(endpoint);
        await storage.createEndpoint(other);
        const next = rewritten(storedOf(endpoint), "pcv1");
        expect(await credentials().rewriteCredentials(endpoint.id, storedOf(endpoint), next)).toBe(true);
        expect(await storage.getEndpoint(endpoint.id)).toEqual({
          ...endpoint,
          headers: next.headers,
          secrets: endpoint.secrets.map((s, i) => ({ ...s, secret: next.secrets[i] })),
        });
        expect(await storage.getEndpoint(other.id)).toEqual(other);
      });

      test("matches the expected headers whatever the order of their names", async () => {
        const storage = context.storage();
        const endpoint = endpointWithCredentials();
        await storage.createEndpoint(endpoint);
        const stored = storedOf(endpoint);
        const reversed = Object.fromEntries(Object.entries(stored.headers).reverse());
        const next = rewritten(stored, "k2");
        expect(
          await credentials().rewriteCredentials(endpoint.id, { ...stored, headers: reversed }, next),
        ).toBe(true);
        expect((await storage.getEndpoint(endpoint.id))?.headers).toEqual(next.headers);
      });

      test("refuses, writing nothing, when a header was changed meanwhile", async () => {
        const storage = context.storage();
        const endpoint = endpointWithCredentials();
        await storage.createEndpoint(endpoint);
        const headers = { ...endpoint.headers, Authorization: "Bearer user-set" };
        await storage.updateEndpoint(endpoint.id, { headers }, T0 + 10);
        const stale = storedOf(endpoint);
        expect(await credentials().rewriteCredentials(endpoint.id, stale, rewritten(stale, "k2"))).toBe(
          false,
        );
        const now = await storage.getEndpoint(endpoint.id);
        expect(now?.headers).toEqual(headers);
        expect(now?.secrets).toEqual(endpoint.secrets);
      });

      test("refuses when a secret was added meanwhile (a rotation), and keeps the new one", async () => {
        const storage = context.storage();
        const endpoint = endpointWithCredentials();
        await storage.createEndpoint(endpoint);
        const added = {
          secret: "whsec_YWRkZWQtc2VjcmV0LTEyMzQ1Njc4OTAxMg==",
          createdAt: T0 + 20,
          expiresAt: null,
        };
        await storage.addEndpointSecret(endpoint.id, added, T0 + 1_000);
        const stale = storedOf(endpoint);
        expect(await credentials().rewriteCredentials(endpoint.id, stale, rewritten(stale, "k2"))).toBe(
          false,
        );
        const now = await storage.getEndpoint(endpoint.id);
        expect(now?.secrets.map((s) => s.secret)).toEqual([added.secret, ...stale.secrets]);
        expect(now?.headers).toEqual(endpoint.headers);
      });

      test("refuses when the expected values differ in any way: a value, a missing or extra header, a secret", async () => {
        const storage = context.storage();
        const endpoint = endpointWithCredentials();
        await storage.createEndpoint(endpoint);
        const stored = storedOf(endpoint);
        const { "x-team": _dropped, ...fewer } = stored.headers;
        const wrong: StoredCredentials[] = [
          { ...stored, headers: { ...stored.headers, "x-team": "other" } },
          { ...stored, headers: fewer },
          { ...stored, headers: { ...stored.headers, "x-extra": "more" } },
          { ...stored, secrets: [stored.secrets[0]!, "whsec_other"] },
          { ...stored, secrets: [...stored.secrets].reverse() },
          { ...stored, secrets: stored.secrets.slice(1) },
        ];
        for (const expected of wrong) {
          expect(
            await credentials().rewriteCredentials(endpoint.id, expected, rewritten(expected, "k2")),
          ).toBe(false);
        }
        expect(await storage.getEndpoint(endpoint.id)).toEqual(endpoint);
      });

      test("refuses for an unknown or deleted endpoint", async () => {
        const storage = context.storage();
        const endpoint = endpointWithCredentials();
        await storage.createEndpoint(endpoint);
        await storage.deleteEndpoint(endpoint.id, T0 + 10);
        const stored = storedOf(endpoint);
        expect(await credentials().rewriteCredentials(endpoint.id, stored, rewritten(stored, "k2"))).toBe(
          false,
        );
        expect(await credentials().rewriteCredentials("ep_unknown", stored, rewritten(stored, "k2"))).toBe(
          false,
        );
      });

      test("rewrites secrets alone, and an endpoint without headers or secrets", async () => {
        const storage = context.storage();
        const bare = newEndpoint({ headers: {}, secrets: [] });
        const secretsOnly = newEndpoint();
        await storage.createEndpoint(bare);
        await storage.createEndpoint(secretsOnly);
        const empty = { headers: {}, secrets: [] };
        expect(await credentials().rewriteCredentials(bare.id, empty, empty)).toBe(true);
        const stored = storedOf(secretsOnly);
        const next = rewritten(stored, "k2");
        expect(await credentials().rewriteCredentials(secretsOnly.id, stored, next)).toBe(true);
        expect((await storage.getEndpoint(secretsOnly.id))?.secrets.map((s) => s.secret)).toEqual(
          next.secrets,
        );
      });

      test("stores values longer than any plaintext bound (ciphertext of a 4,096-character header) unchanged", async () => {
        const storage = context.storage();
        const endpoint = newEndpoint({ headers: { "x-long": "v".repeat(4_096) } });
        await storage.createEndpoint(endpoint);
        const next = {
          headers: { "x-long": `pcv1.k2.${"A".repeat(16_500)}` },
          secrets: [`pcv1.k2.${"B".repeat(80)}`],
        };
        expect(await credentials().rewriteCredentials(endpoint.id, storedOf(endpoint), next)).toBe(true);
        const now = await storage.getEndpoint(endpoint.id);
        expect(now?.headers).toEqual(next.headers);
        expect(now?.secrets[0]?.secret).toBe(next.secrets[0]);
      });
    },
    missing,
  );
}
