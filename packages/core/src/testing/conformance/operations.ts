import { expect } from "vitest";
import { ManualClock } from "../../clock.js";
import { createIdGenerator, idFloor } from "../../ids.js";
import type { AttemptRecord, ClaimedDelivery, EndpointRecord } from "../../storage/records.js";
import { HEALTH_BUCKET_MS, type Storage } from "../../storage/storage.js";
import { type ConformanceContext, group } from "./context.js";
import {
  attemptFor,
  claimAll,
  claimOne,
  createEndpoints,
  fanOut,
  newEndpoint,
  newMessage,
  nextId,
  settle,
  T0,
} from "./fixtures.js";

/** The operations reads: keyset pages under inserts, `stats` and `recentAttempts`. */
export function operationsTests(context: ConformanceContext): void {
  attemptFeedTests(context);
  group(context, "pagination", (test) => {
    test("listMessages pages skip and repeat no message when messages are inserted between pages", async () => {
      const storage = context.storage();
      const base = nextId("msg");
      const enqueue = (suffix: string) => storage.enqueue(newMessage({ id: `${base}_${suffix}` }));
      for (const suffix of ["b", "d", "f", "h", "j", "l"]) await enqueue(suffix);
      const seen = await readAllPages(
        (after) => storage.operations!.listMessages({ limit: 2, after }),
        (m) => m.id,
        // Between pages: one newer than everything, one beside rows already read, one still to come.
        async (page) => {
          if (page === 1) for (const suffix of ["m", "k", "g"]) await enqueue(suffix);
          if (page === 2) await enqueue("e");
        },
      );
      expectEachOnce(
        seen,
        ["b", "d", "f", "h", "j", "l"].map((s) => `${base}_${s}`),
      );
      expect(seen).toEqual([...seen].sort().reverse());
    });

    test("messageWindow (optional) bounds a listing: the lowest of the `size` newest ids below `after`, and listMessages honours `from`", async () => {
      const storage = context.storage();
      if (storage.operations!.messageWindow === undefined) {
        // Optional: without it core lists filtered messages without windows (this storage's own cost).
        expect(storage.operations!.messageWindow).toBeUndefined();
        return;
      }
      const base = nextId("msg");
      const ids = ["a", "b", "c", "d", "e"].map((suffix) => `${base}_${suffix}`);
      for (const [i, id] of ids.entries()) {
        await storage.enqueue(newMessage({ id, type: i % 2 === 0 ? "even" : "odd" }));
      }
      expect(await storage.operations!.messageWindow!(undefined, 3)).toBe(ids[2]);
      expect(await storage.operations!.messageWindow!(ids[3], 3)).toBe(ids[0]);
      expect(await storage.operations!.messageWindow!(ids[2], 3)).toBeNull(); // two left below c
      const window = await storage.operations!.listMessages({ limit: 10, type: "even", from: ids[2] });
      expect(window.map((m) => m.id)).toEqual([ids[4], ids[2]]);
      const below = await storage.operations!.listMessages({
        limit: 10,
        type: "even",
        after: ids[2],
        from: ids[0],
      });
      expect(below.map((m) => m.id)).toEqual([ids[0]]);
    });

    test("listEndpoints pages skip and repeat no endpoint when endpoints are created between pages", async () => {
      const storage = context.storage();
      const base = nextId("ep");
      const create = (suffix: string) => storage.createEndpoint(newEndpoint({ id: `${base}_${suffix}` }));
      for (const suffix of ["b", "d", "f", "h", "j"]) await create(suffix);
      const seen = await readAllPages(
        (after) => storage.operations!.listEndpoints({ limit: 2, after }),
        (e) => e.id,
        async (page) => {
          if (page === 1) for (const suffix of ["a", "c", "e", "z"]) await create(suffix);
        },
      );
      expectEachOnce(
        seen,
        ["b", "d", "f", "h", "j"].map((s) => `${base}_${s}`),
      );
      expect(seen).toEqual([...seen].sort());
    });

    test("listDeadLetters pages skip and repeat no dead letter when deliveries are dead-lettered between pages", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { deliveries } = await fanOut(storage, { endpoints: [endpoint!], messages: 6 });
      const claimed = await claimAll(storage, T0);
      const deadLetter = (index: number) =>
        settle(storage, claimed.get(deliveries[index]!.id)!, { kind: "dead-lettered" }, T0 + 1);
      for (const index of [1, 2, 4, 5]) await deadLetter(index);
      const seen = await readAllPages(
        (after) => storage.operations!.listDeadLetters({ limit: 2, after }),
        (d) => d.deliveryId,
        async (page) => {
          if (page !== 1) return;
          // One among the rows still to come, one past the end, and newer deliveries before the cursor.
          await deadLetter(3);
          await deadLetter(0);
          const more = await fanOut(storage, { endpoints: [endpoint!], messages: 2, now: T0 + 2 });
          const newer = await claimAll(storage, T0 + 2);
          for (const delivery of more.deliveries)
            await settle(storage, newer.get(delivery.id)!, { kind: "dead-lettered" }, T0 + 3);
        },
      );
      expectEachOnce(
        seen,
        [1, 2, 4, 5].map((i) => deliveries[i]!.id),
      );
      expect(seen).toEqual([...seen].sort().reverse());
    });
  });

  group(context, "stats", (test) => {
    test("stats counts each endpoint's work by state and its attempts since `since`, and the totals", async () => {
      const storage = context.storage();
      const [a, b] = await createEndpoints(storage, 2);
      const { deliveries } = await fanOut(storage, { endpoints: [a!, b!], messages: 4 });
      const claimed = await claimAll(storage, T0);
      const of = (endpoint: EndpointRecord, i: number) =>
        claimed.get(deliveries.filter((d) => d.endpointId === endpoint.id)[i]!.id)!;
      await settle(storage, of(a!, 0), { kind: "succeeded" }, T0);
      await settle(storage, of(a!, 1), { kind: "retry", nextAttemptAt: T0 + 120_000, retriesUsed: 1 }, T0);
      await settle(storage, of(a!, 2), { kind: "dead-lettered" }, T0);
      // a's fourth stays leased until T0 + 60 s: in flight.
      await settle(storage, of(b!, 0), { kind: "held" }, T0);
      await settle(storage, of(b!, 1), { kind: "deferred", nextAttemptAt: T0 + 1_000 }, T0);
      await settle(storage, of(b!, 2), { kind: "failed" }, T0);
      await settle(storage, of(b!, 3), { kind: "retry", nextAttemptAt: T0 + 30_000, retriesUsed: 1 }, T0);
      await fanOut(storage, { endpoints: [a!], messages: 2, now: T0 + 2_000 });
      for (let i = 0; i < 3; i++) await storage.enqueue(newMessage({ createdAt: T0 + 3_000 }));
      await storage.transitionEndpoint(
        b!.id,
        { state: "active", circuitOpenUntil: null },
        { state: "circuit-open", circuitOpenUntil: T0 + 99_000, disabledReason: null },
        T0,
      );

      const row = (endpoint: EndpointRecord, state = "active", circuitOpenUntil: number | null = null) => ({
        id: endpoint.id,
        url: endpoint.url,
        description: endpoint.description,
        state,
        circuitOpenUntil,
      });
      expect(await storage.operations!.stats({ now: T0 + 40_000, since: T0 - HEALTH_BUCKET_MS })).toEqual({
        totals: {
          due: 4,
          oldestDueAt: T0 + 1_000,
          inFlight: 1,
          scheduled: 1,
          held: 1,
          deadLetters: 1,
          failed: 1,
        },
        unfanned: 3,
        endpoints: [
          {
            ...row(a!),
            ...{
              due: 2,
              inFlight: 1,
              scheduled: 1,
              held: 0,
              deadLetters: 1,
              failed: 0,
              attempts: 3,
              failures: 2,
            },
          },
          {
            ...row(b!, "circuit-open", T0 + 99_000),
            ...{
              due: 2,
              inFlight: 0,
              scheduled: 0,
              held: 1,
              deadLetters: 0,
              failed: 1,
              attempts: 2,
              failures: 2,
            },
          },
        ],
      });

      // One endpoint's: its line alone, the totals its own (un-fanned messages have no endpoint yet).
      expect(
        await storage.operations!.stats({
          now: T0 + 40_000,
          since: T0 - HEALTH_BUCKET_MS,
          endpointId: b!.id,
        }),
      ).toEqual({
        totals: {
          due: 2,
          oldestDueAt: T0 + 1_000,
          inFlight: 0,
          scheduled: 0,
          held: 1,
          deadLetters: 0,
          failed: 1,
        },
        unfanned: 3,
        endpoints: [
          {
            ...row(b!, "circuit-open", T0 + 99_000),
            ...{
              due: 2,
              inFlight: 0,
              scheduled: 0,
              held: 1,
              deadLetters: 0,
              failed: 1,
              attempts: 2,
              failures: 2,
            },
          },
        ],
      });

      // Past a's lease the leased delivery is due again; health buckets before `since` do not count.
      const later = await storage.operations!.stats({ now: T0 + 70_000, since: T0 + HEALTH_BUCKET_MS });
      expect(later.totals).toEqual({
        due: 5,
        oldestDueAt: T0 + 1_000,
        inFlight: 0,
        scheduled: 1,
        held: 1,
        deadLetters: 1,
        failed: 1,
      });
      expect(later.endpoints.map((e) => [e.due, e.inFlight, e.attempts, e.failures])).toEqual([
        [3, 0, 0, 0],
        [2, 0, 0, 0],
      ]);
    });

    test("stats of an empty storage is all zeros, with no oldest due delivery", async () => {
      const storage = context.storage();
      expect(await storage.operations!.stats({ now: T0, since: T0 - 3_600_000 })).toEqual({
        totals: { due: 0, oldestDueAt: null, inFlight: 0, scheduled: 0, held: 0, deadLetters: 0, failed: 0 },
        unfanned: 0,
        endpoints: [],
      });
    });

    test("stats lists only live endpoints but counts a deleted endpoint's dead letters in the totals", async () => {
      const storage = context.storage();
      const [kept, deleted] = await createEndpoints(storage, 2);
      const { deliveries } = await fanOut(storage, { endpoints: [kept!, deleted!], messages: 2 });
      const claimed = await claimAll(storage, T0);
      for (const delivery of deliveries.filter((d) => d.endpointId === deleted!.id).slice(0, 1))
        await settle(storage, claimed.get(delivery.id)!, { kind: "dead-lettered" }, T0);
      await storage.deleteEndpoint(deleted!.id, T0 + 1);
      const stats = await storage.operations!.stats({ now: T0 + 1, since: T0 });
      expect(stats.endpoints.map((e) => e.id)).toEqual([kept!.id]);
      expect(stats.totals).toMatchObject({ deadLetters: 1, inFlight: 2, held: 0 });
    });

    test("stats counts the 10 live deliveries beside 2,000 finished ones", async () => {
      const storage = context.storage();
      const endpoints = await createEndpoints(storage, 20);
      await fanOut(storage, { endpoints, messages: 100 });
      const history = [...(await claimAll(storage, T0, { limit: 10_000 })).values()];
      await storage.recordOutcomes(
        history.map((claimed, i) => ({
          deliveryId: claimed.delivery.id,
          leaseToken: claimed.leaseToken,
          transition: { kind: i % 100 === 0 ? "dead-lettered" : "succeeded" },
          attempt: attemptFor(claimed, { startedAt: T0, outcome: i % 100 === 0 ? "retryable" : "success" }),
        })),
        T0 + 1,
      );
      await fanOut(storage, { endpoints: [endpoints[0]!], messages: 10, now: T0 + 2 });
      const stats = await storage.operations!.stats({ now: T0 + 2, since: T0 });
      expect(stats.totals).toEqual({
        due: 10,
        oldestDueAt: T0 + 2,
        inFlight: 0,
        scheduled: 0,
        held: 0,
        deadLetters: 20,
        failed: 0,
      });
      expect(stats.endpoints.map((e) => e.due)).toEqual([10, ...Array(19).fill(0)]);
      const attempts = stats.endpoints.reduce((sum, e) => sum + e.attempts, 0);
      const failures = stats.endpoints.reduce((sum, e) => sum + e.failures, 0);
      expect([attempts, failures]).toEqual([2_000, 20]);
    });
  });

  group(context, "stats-cap", (test) => {
    test("stats with countCap stops each count at the cap, keeps the oldest due exact, and counts exactly without it", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { deliveries } = await fanOut(storage, { endpoints: [endpoint!], messages: 30 });
      const claimed = [...(await claimAll(storage, T0, { limit: 100 })).values()];
      // 4 stay in flight; 8 wait for a retry; 6 dead-lettered; 7 failed; the 5 others are due again.
      const kinds = [
        ...Array(8).fill({ kind: "retry", nextAttemptAt: T0 + 600_000, retriesUsed: 1 }),
        ...Array(6).fill({ kind: "dead-lettered" }),
        ...Array(7).fill({ kind: "failed" }),
        ...Array(5).fill({ kind: "retry", nextAttemptAt: T0 + 1_000, retriesUsed: 1 }),
      ];
      await storage.recordOutcomes(
        kinds.map((transition, i) => ({
          deliveryId: claimed[i]!.delivery.id,
          leaseToken: claimed[i]!.leaseToken,
          transition,
          attempt: attemptFor(claimed[i]!, { startedAt: T0, outcome: "retryable", statusCode: 500 }),
        })),
        T0 + 1,
      );
      for (let i = 0; i < 9; i++) await storage.enqueue(newMessage({ createdAt: T0 }));
      expect(deliveries).toHaveLength(30);

      const now = T0 + 2_000; // the 4 leases run to T0 + 60 s
      const exact = await storage.operations!.stats({ now, since: T0 });
      expect(exact.totals).toEqual({
        due: 5,
        oldestDueAt: T0 + 1_000,
        inFlight: 4,
        scheduled: 8,
        held: 0,
        deadLetters: 6,
        failed: 7,
      });
      expect(exact.unfanned).toBe(9);

      const capped = await storage.operations!.stats({ now, since: T0, countCap: 3 });
      const [line] = capped.endpoints;
      expect([line!.due, line!.held, line!.deadLetters, line!.failed]).toEqual([3, 0, 3, 3]);
      expect(line!.inFlight).toBeLessThanOrEqual(3);
      expect(line!.scheduled).toBeLessThanOrEqual(3);
      expect(line!.inFlight + line!.scheduled).toBeGreaterThanOrEqual(3);
      expect(capped.totals.oldestDueAt).toBe(T0 + 1_000);
      expect(capped.unfanned).toBe(3);
      // A cap above every count changes nothing.
      expect(await storage.operations!.stats({ now, since: T0, countCap: 1_000 })).toEqual(exact);
      // Nor does telling where leases end (the retries at T0 + 600 s lie beyond it), capped or not.
      const leasesUntil = T0 + 120_000;
      expect(await storage.operations!.stats({ now, since: T0, leasesUntil })).toEqual(exact);
      expect(await storage.operations!.stats({ now, since: T0, countCap: 1_000, leasesUntil })).toEqual(
        exact,
      );
      expect(await storage.operations!.stats({ now, since: T0, countCap: 3, leasesUntil })).toEqual(capped);
    });
  });

  group(context, "recent-attempts", (test) => {
    test("recentAttempts returns the attempts started at or after `since`, first and later ones, oldest first, at most `limit`", async () => {
      const storage = context.storage();
      const [a, b] = await createEndpoints(storage, 2);
      const { deliveries } = await fanOut(storage, { endpoints: [a!, b!], messages: 2 });
      const claimed = await claimAll(storage, T0);
      const [a0, b0, a1, b1] = deliveries.map((d) => claimed.get(d.id)!);
      const first = await record(storage, a0!, { kind: "succeeded" }, T0 + 1_000);
      const retried = await record(
        storage,
        a1!,
        { kind: "retry", nextAttemptAt: T0 + 10_000, retriesUsed: 1 },
        T0 + 2_000,
      );
      const before = await record(storage, b0!, { kind: "dead-lettered" }, T0 + 500);
      await settle(storage, b1!, { kind: "held" }, T0 + 600);
      const again = await claimOne(storage, a1!.delivery.id, T0 + 10_000);
      const second = await record(storage, again, { kind: "succeeded" }, T0 + 10_500);

      expect(await storage.operations!.recentAttempts({ since: T0 + 1_000, limit: 10 })).toEqual([
        first,
        retried,
        second,
      ]);
      expect(await storage.operations!.recentAttempts({ since: T0 + 1_000, limit: 2 })).toEqual([
        first,
        retried,
      ]);
      expect(await storage.operations!.recentAttempts({ since: T0 + 2_001, limit: 10 })).toEqual([second]);
      expect(await storage.operations!.recentAttempts({ since: T0, limit: 10 })).toEqual([
        before,
        first,
        retried,
        second,
      ]);
      expect(await storage.operations!.recentAttempts({ since: T0 + 10_501, limit: 10 })).toEqual([]);
    });

    test("recentAttempts finds the first attempt of a delivery created long before it (held for a day, then released)", async () => {
      const storage = context.storage();
      const [endpoint] = await createEndpoints(storage, 1);
      const { deliveries } = await fanOut(storage, { endpoints: [endpoint!], messages: 2 });
      const claimed = await claimAll(storage, T0);
      for (const delivery of deliveries)
        await settle(storage, claimed.get(delivery.id)!, { kind: "held" }, T0);
      const day = T0 + 86_400_000;
      await storage.releaseHeld(endpoint!.id, day);
      const released = await claimAll(storage, day);
      const late = await record(storage, released.get(deliveries[1]!.id)!, { kind: "succeeded" }, day + 5);
      expect(await storage.operations!.recentAttempts({ since: day, limit: 10 })).toEqual([late]);
    });
  });
}

function attemptFeedTests(context: ConformanceContext): void {
  group(context, "attempt-feed", (test) => {
    const feed = (storage: Storage<unknown>) => {
      const ops = storage.operations!;
      if (!ops.attemptsAfter) throw new Error("the storage has no attemptsAfter");
      return ops.attemptsAfter.bind(ops);
    };

    test("attemptsAfter returns first and later attempts with ids above `after`, lowest id first, open and finished deliveries alike", async () => {
      const storage = context.storage();
      const [a, b] = await createEndpoints(storage, 2);
      const { deliveries } = await fanOut(storage, { endpoints: [a!, b!], messages: 3 });
      const claimed = await claimAll(storage, T0);
      const [a0, b0, a1, b1, a2, b2] = deliveries.map((d) => claimed.get(d.id)!);
      const before = await record(storage, a0!, { kind: "succeeded" }, T0 + 100);
      const ok = await record(storage, b0!, { kind: "succeeded" }, T0 + 1_000);
      const retry = await record(
        storage,
        a1!,
        { kind: "retry", nextAttemptAt: T0 + 5_000, retriesUsed: 1 },
        T0 + 1_100,
      );
      const held = await record(storage, b1!, { kind: "held" }, T0 + 1_200);
      const dead = await record(storage, a2!, { kind: "dead-lettered" }, T0 + 1_300);
      const failed = await record(storage, b2!, { kind: "failed" }, T0 + 1_400);
      const again = await claimOne(storage, a1!.delivery.id, T0 + 5_000);
      const second = await record(storage, again, { kind: "succeeded" }, T0 + 5_100);

      const after = before.id;
      expect(await feed(storage)({ after, limit: 10 })).toEqual([ok, retry, held, dead, failed, second]);
      expect(await feed(storage)({ after, limit: 2 })).toEqual([ok, retry]);
      expect(await feed(storage)({ after: retry.id, limit: 10 })).toEqual([held, dead, failed, second]);
      expect(await feed(storage)({ after: second.id, limit: 10 })).toEqual([]);
      expect(await feed(storage)({ after: idFloor("att", T0), limit: 1 })).toEqual([before]);
    });

    test("attemptsAfter filters by endpoint, outcome and type before the limit: a quiet endpoint beside a busy one is found", async () => {
      const storage = context.storage();
      const [busy, quiet] = await createEndpoints(storage, 2);
      const { deliveries: many } = await fanOut(storage, {
        endpoints: [busy!],
        messages: Array.from({ length: 30 }, () => ({ type: "order.created" })),
      });
      const { deliveries: few } = await fanOut(storage, {
        endpoints: [quiet!],
        messages: [{ type: "invoice.paid" }],
        now: T0 + 1,
      });
      const claimed = await claimAll(storage, T0 + 1, { limit: 100 });
      const start = idFloor("att", T0);
      const quietAttempt = await record(storage, claimed.get(few[0]!.id)!, { kind: "failed" }, T0 + 10);
      for (const [i, delivery] of many.entries())
        await record(storage, claimed.get(delivery.id)!, { kind: "succeeded" }, T0 + 20 + i);

      expect(await feed(storage)({ after: start, limit: 5, endpointId: quiet!.id })).toEqual([quietAttempt]);
      expect(await feed(storage)({ after: start, limit: 5, outcome: "retryable" })).toEqual([quietAttempt]);
      expect(await feed(storage)({ after: start, limit: 5, type: "invoice.paid" })).toEqual([quietAttempt]);
      expect(
        await feed(storage)({ after: start, limit: 5, type: "invoice.paid", outcome: "success" }),
      ).toEqual([]);
      const busyOnes = await feed(storage)({ after: quietAttempt.id, limit: 100, endpointId: busy!.id });
      expect(busyOnes).toHaveLength(30);
      expect(busyOnes.map((x) => x.id)).toEqual(busyOnes.map((x) => x.id).sort());
    });
  });
}

/**
 * Record `transition` for a claimed delivery with an attempt that started at `startedAt` and took
 * 20 ms, its id made by core's id generator when the response arrived (as workers make it).
 */
async function record(
  storage: Storage<unknown>,
  claimed: ClaimedDelivery,
  transition: Parameters<typeof settle>[2],
  startedAt: number,
): Promise<AttemptRecord> {
  const failed = transition.kind !== "succeeded";
  const attempt = attemptFor(claimed, {
    id: createIdGenerator(new ManualClock(startedAt + 20))("att"),
    startedAt,
    latencyMs: 20,
    ...(failed ? { outcome: "retryable", statusCode: 503, error: "HTTP 503", responseSnippet: null } : {}),
  });
  const result = await storage.recordOutcomes(
    [{ deliveryId: claimed.delivery.id, leaseToken: claimed.leaseToken, transition, attempt }],
    startedAt + 20,
  );
  expect(result.recorded).toEqual([claimed.delivery.id]);
  return attempt;
}

/** Every page of a listing, `between(page)` run after each page is read; returns the ids in order. */
export async function readAllPages<R>(
  read: (after: string | undefined) => Promise<R[]>,
  key: (row: R) => string,
  between: (page: number) => Promise<void>,
): Promise<string[]> {
  const seen: string[] = [];
  let after: string | undefined;
  for (let page = 1; page < 100; page++) {
    const rows = await read(after);
    if (rows.length === 0) return seen;
    seen.push(...rows.map(key));
    after = key(rows.at(-1)!);
    await between(page);
  }
  throw new Error("readAllPages: more than 100 pages");
}

/** Every id of `expected` appears exactly once in `seen`, and no id appears twice. */
export function expectEachOnce(seen: string[], expected: string[]): void {
  expect(new Set(seen).size).toBe(seen.length);
  for (const id of expected) expect(seen.filter((s) => s === id)).toEqual([id]);
}
