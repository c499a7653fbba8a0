import { sign } from "@postel/signing";
import {
  D1_DEDUP_SCHEMA,
  type D1DatabaseLike,
  D1DedupStore,
  type DedupStore,
  InMemoryDedupStore,
  Receiver,
} from "@postel/signing/inbound";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { STANDARD_SECRET } from "../fixtures/keys.js";
import { type Bundle, bundle } from "./bundle.js";
import { newId } from "./requests.js";
import { workerd } from "./runtimes.js";

const T0 = Date.UTC(2026, 0, 1);

// One workerd with a local D1 database: the claim race runs inside the worker, the rest drives the
// same database from here through Miniflare's binding proxy.
let mf: Miniflare;
let db: D1DatabaseLike;
let built: Bundle | undefined;

beforeAll(async () => {
  built = await bundle("d1-claims.ts", workerd.target);
  mf = workerd.miniflare(built);
  await mf.ready;
  db = (await mf.getD1Database("DB")) as unknown as D1DatabaseLike;
  await D1DedupStore(db).migrate();
}, 60_000);
afterAll(async () => {
  await mf?.dispose();
  built?.remove();
});

const rowOf = async (source: string, id: string) =>
  (
    await db
      .prepare("SELECT status, expires_at FROM postel_received WHERE source = ?1 AND id = ?2")
      .bind(source, id)
      .run()
  ).results?.[0];

describe("D1DedupStore in workerd", () => {
  test("of 20 concurrent claims of one id inside the worker, exactly one wins", async () => {
    const id = newId("race");
    const response = await mf.dispatchFetch("http://worker.test/claims", {
      method: "POST",
      body: JSON.stringify({ source: "race", id, now: T0, count: 20 }),
    });
    const results = (await response.json()) as string[];
    expect(results).toHaveLength(20);
    expect(results.filter((r) => r === "claimed")).toHaveLength(1);
    expect(results.filter((r) => r === "in-flight")).toHaveLength(19);
  });

  test("claims racing from two requests to the worker: exactly one of 20 wins", async () => {
    const id = newId("race2");
    const race = () =>
      mf
        .dispatchFetch("http://worker.test/claims", {
          method: "POST",
          body: JSON.stringify({ source: "race", id, now: T0, count: 10 }),
        })
        .then((response) => response.json() as Promise<string[]>);
    const results = (await Promise.all([race(), race()])).flat();
    expect(results.filter((r) => r === "claimed")).toHaveLength(1);
    expect(results.filter((r) => r === "in-flight")).toHaveLength(19);
  });

  test("release never forgets a completed record (only a processing one)", async () => {
    const store = D1DedupStore(db);
    const key = { source: "billing", id: newId("done") };
    expect(await store.claim(key, T0, T0 + 60_000)).toBe("claimed");
    await store.complete(key, T0, T0 + 3_600_000);
    await store.release(key);
    expect(await store.claim(key, T0 + 1, T0 + 60_001)).toBe("duplicate");
  });

  test("a claim sweeps expired records away in the background; settled() waits for the sweep", async () => {
    const count = async () => {
      const { results } = await db
        .prepare("SELECT count(*) AS n FROM postel_received WHERE source = 'sweep'")
        .run();
      return (results?.[0] as { n?: number } | undefined)?.n;
    };
    await db
      .prepare(
        `WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < 2500)
        INSERT INTO postel_received (source, id, status, received_at, expires_at)
        SELECT 'sweep', 'old_' || n, 'done', ?1, ?2 FROM i`,
      )
      .bind(T0, T0 + 1_000)
      .run();
    const store = D1DedupStore(db);
    expect(await store.claim({ source: "sweep", id: "new" }, T0 + 60_000, T0 + 3_600_000)).toBe("claimed");
    await store.settled();
    expect(await count()).toBe(1);
    expect(await rowOf("sweep", "new")).toEqual({ status: "processing", expires_at: T0 + 3_600_000 });
  });

  test("with { migrate: false } it uses the table D1_DEDUP_SCHEMA made, and creates none itself", async () => {
    const statements: string[] = [];
    const recorder: D1DatabaseLike = {
      prepare: (sql) => {
        statements.push(sql);
        return db.prepare(sql);
      },
      batch: (batch) => db.batch(batch),
    };
    const store = D1DedupStore(recorder, { migrate: false });
    expect(await store.claim({ source: "billing", id: newId("nomigrate") }, T0, T0 + 60_000)).toBe("claimed");
    expect(statements.length).toBeGreaterThan(0);
    expect(statements.filter((sql) => sql.trimStart().startsWith("CREATE"))).toEqual([]);
    expect(D1_DEDUP_SCHEMA.join("\n")).toContain("CREATE TABLE IF NOT EXISTS postel_received");
  });

  test("behind the gate, a handler that throws releases the id so the sender's retry runs it", async () => {
    const receiver = Receiver({ sources: { billing: { verify: STANDARD_SECRET, dedup: D1DedupStore(db) } } });
    const id = newId("retry");
    const body = new TextEncoder().encode('{"type":"invoice.paid"}');
    const headers = sign({ id, timestamp: new Date(), body, keys: STANDARD_SECRET });
    const failed = await receiver.handle("billing", { body, headers }, () => {
      throw new Error("database down");
    });
    expect(failed.status).toBe(500);
    expect(await rowOf("billing", id)).toBeUndefined();
    let runs = 0;
    const retried = await receiver.handle("billing", { body, headers }, () => {
      runs++;
    });
    expect(retried.status).toBe(200);
    expect(runs).toBe(1);
    expect(await rowOf("billing", id)).toMatchObject({ status: "done" });
    const duplicate = await receiver.handle("billing", { body, headers }, () => {
      runs++;
    });
    expect(duplicate.headers["x-postel-duplicate"]).toBe("true");
    expect(runs).toBe(1);
  });
});

// The contract `DedupStore` documents, asserted the same way on the in-memory store and on D1.
describe.each([
  { name: "InMemoryDedupStore", store: (): DedupStore => InMemoryDedupStore() },
  { name: "D1DedupStore", store: (): DedupStore => D1DedupStore(db) },
])("$name keeps the DedupStore contract", ({ store: makeStore }) => {
  const key = () => ({ source: "billing", id: newId("contract") });

  test("a completed id is a duplicate until it expires, then can be claimed again", async () => {
    const store = makeStore();
    const k = key();
    expect(await store.claim(k, T0, T0 + 60_000)).toBe("claimed");
    await store.complete(k, T0, T0 + 3_600_000);
    expect(await store.claim(k, T0 + 1_000, T0 + 61_000)).toBe("duplicate");
    expect(await store.claim(k, T0 + 3_599_999, T0 + 3_659_999)).toBe("duplicate");
    expect(await store.claim(k, T0 + 3_600_000, T0 + 3_660_000)).toBe("claimed");
  });

  test("a released id is claimed again", async () => {
    const store = makeStore();
    const k = key();
    expect(await store.claim(k, T0, T0 + 60_000)).toBe("claimed");
    await store.release(k);
    expect(await store.claim(k, T0, T0 + 60_000)).toBe("claimed");
  });

  test("a stale processing record is in flight until it expires, then taken over", async () => {
    const store = makeStore();
    const k = key();
    expect(await store.claim(k, T0, T0 + 60_000)).toBe("claimed");
    expect(await store.claim(k, T0 + 59_999, T0 + 120_000)).toBe("in-flight");
    expect(await store.claim(k, T0 + 60_000, T0 + 120_000)).toBe("claimed");
    expect(await store.claim(k, T0 + 119_999, T0 + 180_000)).toBe("in-flight");
  });

  test("sources are separate namespaces", async () => {
    const store = makeStore();
    const k = key();
    expect(await store.claim(k, T0, T0 + 60_000)).toBe("claimed");
    expect(await store.claim({ ...k, source: "crm" }, T0, T0 + 60_000)).toBe("claimed");
  });
});
