import { expect } from "vitest";
import type { EndpointRecord } from "../../storage/records.js";
import { type ConformanceContext, group } from "./context.js";
import { claimAll, createEndpoints, deliveryRow, fanOut, ids, newEndpoint, settle, T0 } from "./fixtures.js";

/** Every field set, nested JSON included, to prove the round trip is lossless. */
function fullEndpoint(): EndpointRecord {
  return newEndpoint({
    url: "https://hooks.example.com/postel?source=test",
    description: "Orders for the ERP",
    types: ["order.*", "invoice.paid"],
    filter: { $or: [{ "data.total": { $gte: 100 } }, { "data.vip": true }], tags: ["a", "b"] },
    filterFn: "onlyPaid",
    transform: "toErpShape",
    headers: { "x-api-key": "k-123", "x-team": "billing" },
    retryPolicy: { kind: "exponential", schedule: [5_000, 300_000, 1_800_000], maxAttempts: 3, jitter: 0.2 },
    circuitBreaker: { threshold: 0.5, cooldownMs: 300_000, windowMs: 60_000, minimumVolume: 10 },
    autoDisable: { failureRate: 0.9, windowMs: 3_600_000, minAttempts: 20 },
    maxInFlight: 8,
    rateLimit: 0.5,
    tenantId: "tenant-a",
    metadata: { owner: { team: "billing", oncall: ["ana", "bo"] }, priority: 2, beta: false, note: null },
    state: "circuit-open",
    circuitOpenUntil: T0 + 300_000,
    disabledReason: null,
    createdAt: T0 + 1,
    updatedAt: T0 + 2,
    secrets: [
      { secret: "whsec_bmV3ZXN0LXNlY3JldC0xMjM0NTY3ODkw", createdAt: T0 + 1, expiresAt: null },
      { secret: "whsec_b2xkZXItc2VjcmV0LTEyMzQ1Njc4OTA=", createdAt: T0, expiresAt: T0 + 86_400_000 },
    ],
  });
}

/** Endpoint rows, listing, revision, updates, deletion, CAS transitions and secrets. */
export function endpointTests(context: ConformanceContext): void {
  group(context, "endpoints", (test) => {
    test("createEndpoint then getEndpoint round-trips every field", async () => {
      const storage = context.storage();
      const endpoint = fullEndpoint();
      await storage.createEndpoint(endpoint);
      expect(await storage.getEndpoint(endpoint.id)).toEqual(endpoint);
    });

    test("null fields, empty collections and every retry policy kind round-trip unchanged", async () => {
      const storage = context.storage();
      const endpoints = [
        newEndpoint({ types: [], secrets: [], state: "disabled", disabledReason: "manual" }),
        newEndpoint({ retryPolicy: { kind: "linear", stepMs: 30_000, maxAttempts: 5, jitter: 0 } }),
        newEndpoint({ retryPolicy: { kind: "named", name: "aggressive" } }),
      ];
      for (const endpoint of endpoints) await storage.createEndpoint(endpoint);
      for (const endpoint of endpoints) expect(await storage.getEndpoint(endpoint.id)).toEqual(endpoint);
    });

    test("getEndpoint returns null for an unknown id", async () => {
      expect(await context.storage().getEndpoint("ep_unknown")).toBeNull();
    });

    test("a returned endpoint is a copy: mutating it does not change the stored row", async () => {
      const storage = context.storage();
      const endpoint = fullEndpoint();
      await storage.createEndpoint(endpoint);
      const read = (await storage.getEndpoint(endpoint.id))!;
      read.secrets.pop();
      read.headers["x-api-key"] = "changed";
      read.types.push("everything");
      expect(await storage.getEndpoint(endpoint.id)).toEqual(endpoint);
    });

    test("listEndpoints returns endpoints oldest first, filtered by tenantId and state", async (t) => {
      const operations = t.needs("operations");
      const storage = context.storage();
      const a1 = newEndpoint({ tenantId: "a", createdAt: T0 });
      const b1 = newEndpoint({ tenantId: "b", createdAt: T0 + 1 });
      const a2 = newEndpoint({
        tenantId: "a",
        createdAt: T0 + 2,
        state: "disabled",
        disabledReason: "manual",
      });
      const none = newEndpoint({ createdAt: T0 + 3 });
      for (const endpoint of [a1, b1, a2, none]) await storage.createEndpoint(endpoint);
      const list = async (query: object) =>
        (await operations.listEndpoints({ limit: 10, ...query })).map((e) => e.id);
      expect(await list({})).toEqual([a1.id, b1.id, a2.id, none.id]);
      expect(await list({ tenantId: "a" })).toEqual([a1.id, a2.id]);
      expect(await list({ state: "disabled" })).toEqual([a2.id]);
      expect(await list({ tenantId: "a", state: "active" })).toEqual([a1.id]);
      expect(await operations.listEndpoints({ limit: 10 })).toEqual([a1, b1, a2, none]);
    });

    test("listEndpoints pages with `limit`; `after` (oldest-first order) returns the rows after that id", async (t) => {
      const operations = t.needs("operations");
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 5);
      const page = async (after?: string) =>
        (await operations.listEndpoints({ limit: 2, after })).map((e) => e.id);
      const all = endpoints.map((e) => e.id);
      expect(await page()).toEqual(all.slice(0, 2));
      expect(await page(all[1])).toEqual(all.slice(2, 4));
      expect(await page(all[3])).toEqual(all.slice(4));
      expect(await page(all[4])).toEqual([]);
    });

    test("listEndpoints, allEndpoints and getEndpoint exclude deleted endpoints", async () => {
      const storage = context.storage();
      const [kept, deleted] = await createEndpoints(storage, 2);
      expect(await storage.deleteEndpoint(deleted!.id, T0 + 1)).toBe(true);
      expect(await storage.getEndpoint(deleted!.id)).toBeNull();
      if (storage.operations) {
        expect((await storage.operations.listEndpoints({ limit: 10 })).map((e) => e.id)).toEqual([kept!.id]);
      }
      expect(ids(await storage.allEndpoints())).toEqual([kept!.id]);
    });

    test("allEndpoints returns every live endpoint with all its fields", async () => {
      const storage = context.storage();
      const endpoints = [
        fullEndpoint(),
        newEndpoint(),
        newEndpoint({ state: "disabled", disabledReason: "manual" }),
      ];
      for (const endpoint of endpoints) await storage.createEndpoint(endpoint);
      const all = await storage.allEndpoints();
      expect(ids(all)).toEqual(ids(endpoints));
      expect(all.find((e) => e.id === endpoints[0]!.id)).toEqual(endpoints[0]);
    });

    test("endpointsRevision changes after create, update, delete, state transition and a new secret", async () => {
      const storage = context.storage();
      const seen = [await storage.endpointsRevision()];
      const changed = async () => {
        const revision = await storage.endpointsRevision();
        expect(seen).not.toContain(revision);
        seen.push(revision);
      };
      const endpoint = newEndpoint();
      await storage.createEndpoint(endpoint);
      await changed();
      await storage.updateEndpoint(endpoint.id, { url: "https://new.example.com/hook" }, T0 + 1);
      await changed();
      await storage.transitionEndpoint(
        endpoint.id,
        { state: "active", circuitOpenUntil: null },
        { state: "circuit-open", circuitOpenUntil: T0 + 60_000, disabledReason: null },
        T0 + 2,
      );
      await changed();
      await storage.addEndpointSecret(
        endpoint.id,
        { secret: "whsec_bmV4dA==", createdAt: T0 + 3, expiresAt: null },
        T0 + 86_400_000,
      );
      await changed();
      await storage.deleteEndpoint(endpoint.id, T0 + 4);
      await changed();
    });

    test("updateEndpoint patches only the given fields (null included), bumps updatedAt and returns the row", async () => {
      const storage = context.storage();
      const endpoint = fullEndpoint();
      await storage.createEndpoint(endpoint);
      const patch = {
        url: "https://moved.example.com/hook",
        description: null,
        metadata: { v: 2 },
        filter: null,
      };
      const expected = { ...endpoint, ...patch, updatedAt: T0 + 1_000 };
      expect(await storage.updateEndpoint(endpoint.id, patch, T0 + 1_000)).toEqual(expected);
      expect(await storage.getEndpoint(endpoint.id)).toEqual(expected);
    });

    test("limits round-trip through createEndpoint, getEndpoint, listEndpoints and allEndpoints", async () => {
      const storage = context.storage();
      const endpoints = [
        newEndpoint({ maxInFlight: 1, rateLimit: 100_000 }),
        newEndpoint({ maxInFlight: 10_000, rateLimit: 0.01 }),
        newEndpoint({ maxInFlight: 3, rateLimit: null }),
        newEndpoint({ maxInFlight: null, rateLimit: 2.75 }),
        newEndpoint({ maxInFlight: null, rateLimit: null }),
      ];
      for (const endpoint of endpoints) await storage.createEndpoint(endpoint);
      const limitsOf = (list: EndpointRecord[]) =>
        list.map(({ id, maxInFlight, rateLimit }) => ({ id, maxInFlight, rateLimit }));
      for (const endpoint of endpoints) expect(await storage.getEndpoint(endpoint.id)).toEqual(endpoint);
      if (storage.operations) {
        expect(limitsOf(await storage.operations.listEndpoints({ limit: 10 }))).toEqual(limitsOf(endpoints));
      }
      expect(limitsOf(await storage.allEndpoints())).toEqual(limitsOf(endpoints));
    });

    test("updateEndpoint sets and clears (null) limits, changing nothing else and bumping the revision", async () => {
      const storage = context.storage();
      const endpoint = fullEndpoint();
      await storage.createEndpoint(endpoint);
      const steps: [Partial<EndpointRecord>, Partial<EndpointRecord>][] = [
        [{ maxInFlight: 4 }, { maxInFlight: 4, rateLimit: 0.5 }],
        [{ rateLimit: 12.5 }, { maxInFlight: 4, rateLimit: 12.5 }],
        [{ maxInFlight: null }, { maxInFlight: null, rateLimit: 12.5 }],
        [
          { maxInFlight: 2, rateLimit: null },
          { maxInFlight: 2, rateLimit: null },
        ],
        [{ url: "https://moved.example.com/hook" }, { maxInFlight: 2, rateLimit: null }],
      ];
      let current = endpoint;
      for (const [i, [patch, limits]] of steps.entries()) {
        const revision = await storage.endpointsRevision();
        const now = T0 + 1_000 * (i + 1);
        current = { ...current, ...patch, ...limits, updatedAt: now };
        expect(await storage.updateEndpoint(endpoint.id, patch, now)).toEqual(current);
        expect(await storage.getEndpoint(endpoint.id)).toEqual(current);
        expect(await storage.endpointsRevision()).not.toBe(revision);
      }
    });

    test("updateEndpoint returns null for an unknown or deleted endpoint", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      await storage.deleteEndpoint(endpoint!.id, T0);
      expect(await storage.updateEndpoint(endpoint!.id, { url: "https://x.example.com" }, T0 + 1)).toBeNull();
      expect(await storage.updateEndpoint("ep_unknown", { url: "https://x.example.com" }, T0 + 1)).toBeNull();
    });

    test("deleteEndpoint returns false for an unknown or already deleted endpoint", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      expect(await storage.deleteEndpoint("ep_unknown", T0)).toBe(false);
      expect(await storage.deleteEndpoint(endpoint!.id, T0)).toBe(true);
      expect(await storage.deleteEndpoint(endpoint!.id, T0 + 1)).toBe(false);
    });

    test("deleteEndpoint cancels its pending (even leased) and held deliveries, finalises their messages and leaves others alone", async () => {
      const storage = context.storage();
      const [doomed, other] = await createEndpoints(storage, 2);
      const { messages, deliveries } = await fanOut(storage, { endpoints: [doomed!, other!], messages: 4 });
      const claimed = await claimAll(storage, T0);
      const of = (m: number, endpointId: string) =>
        deliveries.find((d) => d.messageId === messages[m]!.id && d.endpointId === endpointId)!;
      // m0: doomed leased (in flight), other succeeded → dispatched once doomed is cancelled.
      await settle(storage, claimed.get(of(0, other!.id).id)!, { kind: "succeeded" }, T0);
      // m1: doomed held, other dead-lettered → dead-lettered.
      await settle(storage, claimed.get(of(1, doomed!.id).id)!, { kind: "held" }, T0);
      await settle(storage, claimed.get(of(1, other!.id).id)!, { kind: "dead-lettered" }, T0);
      // m2: doomed already failed, other still pending → stays pending.
      await settle(storage, claimed.get(of(2, doomed!.id).id)!, { kind: "failed" }, T0);
      await settle(storage, claimed.get(of(2, other!.id).id)!, { kind: "deferred", nextAttemptAt: T0 }, T0);
      // m3: doomed pending (lease released), other succeeded.
      await settle(
        storage,
        claimed.get(of(3, doomed!.id).id)!,
        { kind: "deferred", nextAttemptAt: T0 + 1 },
        T0,
      );
      await settle(storage, claimed.get(of(3, other!.id).id)!, { kind: "succeeded" }, T0);

      expect(await storage.deleteEndpoint(doomed!.id, T0 + 10)).toBe(true);
      const status = async (m: number, endpointId: string) =>
        (await deliveryRow(storage, of(m, endpointId))).status;
      expect(await status(0, doomed!.id)).toBe("cancelled");
      expect(await status(1, doomed!.id)).toBe("cancelled");
      expect(await status(2, doomed!.id)).toBe("failed");
      expect(await status(3, doomed!.id)).toBe("cancelled");
      expect(await status(2, other!.id)).toBe("pending");
      expect(await storage.getMessage(messages[0]!.id)).toMatchObject({
        status: "dispatched",
        finishedAt: T0 + 10,
      });
      expect(await storage.getMessage(messages[1]!.id)).toMatchObject({
        status: "dead-lettered",
        finishedAt: T0 + 10,
      });
      expect(await storage.getMessage(messages[2]!.id)).toMatchObject({
        status: "pending",
        finishedAt: null,
      });
      expect(await storage.getMessage(messages[3]!.id)).toMatchObject({
        status: "dispatched",
        finishedAt: T0 + 10,
      });
      // The worker that held the cancelled delivery's lease can no longer record an outcome.
      const inFlight = claimed.get(of(0, doomed!.id).id)!;
      expect((await settle(storage, inFlight, { kind: "succeeded" }, T0 + 11)).leaseLost).toEqual([
        inFlight.delivery.id,
      ]);
      expect(
        (await storage.claimDue({ owner: "w", now: T0 + 20, until: T0 + 80, limit: 10 })).map(
          (c) => c.delivery.id,
        ),
      ).toEqual([of(2, other!.id).id]);
    });

    test("transitionEndpoint applies when state and circuitOpenUntil match, setting every state field and updatedAt", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const next = {
        state: "disabled" as const,
        circuitOpenUntil: null,
        disabledReason: "failure rate 95% over 1h",
      };
      const applied = await storage.transitionEndpoint(
        endpoint!.id,
        { state: "active", circuitOpenUntil: null },
        next,
        T0 + 5,
      );
      expect(applied).toBe(true);
      expect(await storage.getEndpoint(endpoint!.id)).toEqual({ ...endpoint, ...next, updatedAt: T0 + 5 });

      const reopen = { state: "circuit-open" as const, circuitOpenUntil: T0 + 60_000, disabledReason: null };
      expect(
        await storage.transitionEndpoint(
          endpoint!.id,
          { state: "disabled", circuitOpenUntil: null },
          reopen,
          T0 + 6,
        ),
      ).toBe(true);
      const probe = { state: "circuit-open" as const, circuitOpenUntil: T0 + 120_000, disabledReason: null };
      expect(
        await storage.transitionEndpoint(
          endpoint!.id,
          { state: "circuit-open", circuitOpenUntil: T0 + 60_000 },
          probe,
          T0 + 7,
        ),
      ).toBe(true);
      expect(await storage.getEndpoint(endpoint!.id)).toMatchObject({ ...probe, updatedAt: T0 + 7 });
    });

    test("transitionEndpoint refuses, changing nothing, when state or circuitOpenUntil differ", async () => {
      const storage = context.storage();
      const endpoint = newEndpoint({ state: "circuit-open", circuitOpenUntil: T0 + 60_000 });
      await storage.createEndpoint(endpoint);
      const next = { state: "active" as const, circuitOpenUntil: null, disabledReason: null };
      expect(
        await storage.transitionEndpoint(
          endpoint.id,
          { state: "circuit-open", circuitOpenUntil: T0 + 1 },
          next,
          T0 + 1,
        ),
      ).toBe(false);
      expect(
        await storage.transitionEndpoint(
          endpoint.id,
          { state: "circuit-open", circuitOpenUntil: null },
          next,
          T0 + 1,
        ),
      ).toBe(false);
      expect(
        await storage.transitionEndpoint(
          endpoint.id,
          { state: "active", circuitOpenUntil: T0 + 60_000 },
          next,
          T0 + 1,
        ),
      ).toBe(false);
      expect(await storage.getEndpoint(endpoint.id)).toEqual(endpoint);
    });

    test("transitionEndpoint returns false for an unknown or deleted endpoint", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      await storage.deleteEndpoint(endpoint!.id, T0);
      const next = { state: "disabled" as const, circuitOpenUntil: null, disabledReason: "manual" };
      expect(
        await storage.transitionEndpoint(
          endpoint!.id,
          { state: "active", circuitOpenUntil: null },
          next,
          T0 + 1,
        ),
      ).toBe(false);
      expect(
        await storage.transitionEndpoint(
          "ep_unknown",
          { state: "active", circuitOpenUntil: null },
          next,
          T0 + 1,
        ),
      ).toBe(false);
    });

    for (const racers of [2, 10]) {
      test(`${racers} concurrent transitions with the same expectation: exactly one wins`, async () => {
        const storage = context.storage();
        const [endpoint] = await createEndpoints(storage, 1);
        const results = await Promise.all(
          Array.from({ length: racers }, (_, i) =>
            storage.transitionEndpoint(
              endpoint!.id,
              { state: "active", circuitOpenUntil: null },
              { state: "circuit-open", circuitOpenUntil: T0 + 1_000 * (i + 1), disabledReason: null },
              T0 + 1,
            ),
          ),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        const winner = results.indexOf(true);
        expect((await storage.getEndpoint(endpoint!.id))?.circuitOpenUntil).toBe(T0 + 1_000 * (winner + 1));
      });
    }

    test("addEndpointSecret puts the new secret first and gives older secrets without expiry previousExpireAt", async () => {
      const storage = context.storage();
      const expiring = { secret: "whsec_b2xkZXN0", createdAt: T0 - 2_000, expiresAt: T0 + 1_000 };
      const current = { secret: "whsec_Y3VycmVudA==", createdAt: T0 - 1_000, expiresAt: null };
      const endpoint = newEndpoint({ secrets: [current, expiring] });
      await storage.createEndpoint(endpoint);
      const fresh = { secret: "whsec_ZnJlc2g=", createdAt: T0, expiresAt: null };
      await storage.addEndpointSecret(endpoint.id, fresh, T0 + 86_400_000);
      expect((await storage.getEndpoint(endpoint.id))?.secrets).toEqual([
        fresh,
        { ...current, expiresAt: T0 + 86_400_000 },
        expiring,
      ]);
    });
  });
}
