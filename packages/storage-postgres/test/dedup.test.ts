import { Receiver } from "@postel/core/inbound";
import { sign } from "@postel/signing";
import type { Sql } from "postgres";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { migrate, PostgresDedupStore } from "../src/index.js";
import { createTestDatabase, type TestDatabase } from "./support/database.js";

let database: TestDatabase;
let sql: Sql;
let store: PostgresDedupStore;
const T0 = Date.UTC(2026, 0, 1);

beforeAll(async () => {
  database = await createTestDatabase();
  sql = database.connect({ max: 20 });
  await migrate(sql);
  store = PostgresDedupStore({ sql });
});
beforeEach(async () => {
  await sql`TRUNCATE postel.received`;
});
afterAll(() => database.drop());

const key = { source: "billing", id: "msg_1" };

describe("PostgresDedupStore", () => {
  test("of 20 concurrent claims of one id on separate connections, exactly one wins", async () => {
    const results = await Promise.all(Array.from({ length: 20 }, () => store.claim(key, T0, T0 + 60_000)));
    expect(results.filter((r) => r === "claimed")).toHaveLength(1);
    expect(results.filter((r) => r === "in-flight")).toHaveLength(19);
  });

  test("a completed id is a duplicate until it expires, then can be claimed again", async () => {
    expect(await store.claim(key, T0, T0 + 60_000)).toBe("claimed");
    await store.complete(key, T0, T0 + 3_600_000);
    expect(await store.claim(key, T0 + 1_000, T0 + 61_000)).toBe("duplicate");
    expect(await store.claim(key, T0 + 3_600_000, T0 + 3_660_000)).toBe("claimed");
  });

  test("a released id is processed again; a stale processing record is taken over after it expires", async () => {
    expect(await store.claim(key, T0, T0 + 60_000)).toBe("claimed");
    await store.release(key);
    expect(await store.claim(key, T0, T0 + 60_000)).toBe("claimed");
    expect(await store.claim(key, T0 + 59_999, T0 + 120_000)).toBe("in-flight");
    expect(await store.claim(key, T0 + 60_000, T0 + 120_000)).toBe("claimed");
  });

  test("claims sweep expired records away in the background, at most once a minute", async () => {
    // A store on the caller's pool: close() only waits for a sweep in progress, so it can go on.
    const sweeping = PostgresDedupStore({ sql });
    const count = async () => Number((await sql`SELECT count(*) AS n FROM postel.received`)[0]!["n"]);
    // 2,500 records that expire at T0 + 1,000 (three sweep batches).
    await sql`
      INSERT INTO postel.received (source, id, status, received_at, expires_at)
      SELECT 'billing', 'old_' || i, 'done', ${T0}::bigint, ${T0 + 1_000}::bigint FROM generate_series(1, 2500) i`;
    const claimAt = async (id: string, now: number) => {
      expect(await sweeping.claim({ source: "billing", id }, now, now + 3_600_000)).toBe("claimed");
      await sweeping.close();
    };
    await claimAt("first", T0); // sweeps: nothing has expired yet
    expect(await count()).toBe(2_501);
    await claimAt("second", T0 + 30_000); // all expired, but the last sweep was 30 s ago
    expect(await count()).toBe(2_502);
    await claimAt("third", T0 + 60_000);
    expect(await count()).toBe(3);
    // An expired record that was swept is claimed like a new one.
    expect(await store.claim({ source: "billing", id: "old_1" }, T0 + 60_000, T0 + 120_000)).toBe("claimed");
  });

  test("sources are separate namespaces", async () => {
    expect(await store.claim(key, T0, T0 + 60_000)).toBe("claimed");
    expect(await store.claim({ ...key, source: "crm" }, T0, T0 + 60_000)).toBe("claimed");
  });

  test("complete() joins the caller's transaction: rolled back, the record is still processing", async () => {
    expect(await store.claim(key, T0, T0 + 60_000)).toBe("claimed");
    await expect(
      sql.begin(async (tx) => {
        await store.complete(key, T0, T0 + 3_600_000, { tx });
        throw new Error("business write failed");
      }),
    ).rejects.toThrow("business write failed");
    expect(await store.claim(key, T0 + 1, T0 + 60_000)).toBe("in-flight");
    await sql.begin((tx) => store.complete(key, T0, T0 + 3_600_000, { tx }));
    expect(await store.claim(key, T0 + 1, T0 + 60_000)).toBe("duplicate");
  });

  test("behind the gate, concurrent deliveries of one webhook run the handler once", async () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const receiver = Receiver({ sources: { billing: { verify: secret, dedup: store } } });
    const body = new TextEncoder().encode('{"type":"invoice.paid"}');
    const headers = sign({ id: "msg_gate", timestamp: new Date(), body, keys: [secret] });
    let runs = 0;
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        receiver.handle("billing", { body, headers }, async () => {
          runs++;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }),
      ),
    );
    expect(runs).toBe(1);
    expect(responses.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(429)]);
    const again = await receiver.handle("billing", { body, headers }, () => {
      runs++;
    });
    expect(again.headers["x-postel-duplicate"]).toBe("true");
    expect(runs).toBe(1);
  });
});
