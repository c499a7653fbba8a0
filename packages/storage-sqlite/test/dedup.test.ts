import { type Client, createClient } from "@libsql/client";
import { Receiver } from "@postel/core/inbound";
import { sign } from "@postel/signing";
import { drizzle } from "drizzle-orm/libsql";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { SqliteDedupStore } from "../src/index.js";
import { runTogether, startChild } from "./child-process.js";
import { tempDatabase } from "./temp-db.js";

const T0 = Date.UTC(2026, 0, 1);
const key = { source: "billing", id: "msg_1" };

let file: ReturnType<typeof tempDatabase>;
let client: Client;
let store: SqliteDedupStore;

beforeEach(async () => {
  file = tempDatabase();
  client = createClient({ url: file.url, timeout: 5000 });
  store = SqliteDedupStore({ client });
  await store.migrate();
});
afterEach(async () => {
  await store.close();
  client.close();
  file.remove();
});

async function statusOf(id: string): Promise<unknown> {
  const result = await client.execute({ sql: "SELECT status FROM postel_received WHERE id = ?", args: [id] });
  return result.rows[0]?.["status"];
}

describe("SqliteDedupStore", () => {
  test("of 20 concurrent claims of one id from separate stores on one file, exactly one wins", async () => {
    const stores = Array.from({ length: 4 }, () => SqliteDedupStore({ url: file.url }));
    try {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => stores[i % 4]!.claim(key, T0, T0 + 60_000)),
      );
      expect(results.filter((r) => r === "claimed")).toHaveLength(1);
      expect(results.filter((r) => r === "in-flight")).toHaveLength(19);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  test("of 20 claims of one id racing from two processes, exactly one wins", async () => {
    const results = (
      await runTogether([
        startChild("dedup-claim-child.ts", [file.url, "msg_race", "10", String(T0)]),
        startChild("dedup-claim-child.ts", [file.url, "msg_race", "10", String(T0)]),
      ])
    ).flatMap((line) => JSON.parse(line) as string[]);
    expect(results).toHaveLength(20);
    expect(results.filter((r) => r === "claimed")).toHaveLength(1);
    expect(results.filter((r) => r === "in-flight")).toHaveLength(19);
  }, 30_000);

  test("a completed id is a duplicate until it expires, then can be claimed again", async () => {
    expect(await store.claim(key, T0, T0 + 60_000)).toBe("claimed");
    await store.complete(key, T0, T0 + 3_600_000);
    expect(await store.claim(key, T0 + 1_000, T0 + 61_000)).toBe("duplicate");
    expect(await store.claim(key, T0 + 3_599_999, T0 + 3_659_999)).toBe("duplicate");
    expect(await store.claim(key, T0 + 3_600_000, T0 + 3_660_000)).toBe("claimed");
  });

  test("a released id is processed again, but release never forgets a completed one", async () => {
    expect(await store.claim(key, T0, T0 + 60_000)).toBe("claimed");
    await store.release(key);
    expect(await store.claim(key, T0, T0 + 60_000)).toBe("claimed");
    await store.complete(key, T0, T0 + 3_600_000);
    await store.release(key);
    expect(await store.claim(key, T0 + 1, T0 + 60_001)).toBe("duplicate");
  });

  test("a stale processing record is in flight until it expires, then taken over", async () => {
    expect(await store.claim(key, T0, T0 + 60_000)).toBe("claimed");
    expect(await store.claim(key, T0 + 59_999, T0 + 120_000)).toBe("in-flight");
    expect(await store.claim(key, T0 + 60_000, T0 + 120_000)).toBe("claimed");
    expect(await store.claim(key, T0 + 119_999, T0 + 180_000)).toBe("in-flight");
  });

  test("a claim sweeps expired records away in the background; close() waits for the sweep", async () => {
    const count = async () =>
      Number((await client.execute("SELECT count(*) AS n FROM postel_received")).rows[0]!["n"]);
    // 2,500 records that expire at T0 + 1,000 (three sweep batches).
    await client.execute({
      sql: `WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < 2500)
        INSERT INTO postel_received (source, id, status, received_at, expires_at)
        SELECT 'billing', 'old_' || n, 'done', ?, ? FROM i`,
      args: [T0, T0 + 1_000],
    });
    // Each store sweeps on its first claim (then at most once a minute, see expirySweeper's tests).
    const claimAt = async (id: string, now: number) => {
      const sweeping = SqliteDedupStore({ client });
      expect(await sweeping.claim({ source: "billing", id }, now, now + 3_600_000)).toBe("claimed");
      await sweeping.close();
    };
    await claimAt("early", T0); // nothing has expired yet
    expect(await count()).toBe(2_501);
    await claimAt("late", T0 + 60_000);
    expect(await count()).toBe(2);
    // An expired record that was swept is claimed like a new one.
    expect(await store.claim({ source: "billing", id: "old_1" }, T0 + 60_000, T0 + 120_000)).toBe("claimed");
  });

  test("sources are separate namespaces", async () => {
    expect(await store.claim(key, T0, T0 + 60_000)).toBe("claimed");
    expect(await store.claim({ ...key, source: "crm" }, T0, T0 + 60_000)).toBe("claimed");
  });

  test("complete() in a rolled-back libsql transaction leaves the record processing", async () => {
    expect(await store.claim(key, T0, T0 + 60_000)).toBe("claimed");
    const rolledBack = await client.transaction("write");
    await store.complete(key, T0, T0 + 3_600_000, { tx: rolledBack });
    await rolledBack.rollback();
    expect(await statusOf(key.id)).toBe("processing");
    expect(await store.claim(key, T0 + 1, T0 + 60_000)).toBe("in-flight");

    const committed = await client.transaction("write");
    await store.complete(key, T0, T0 + 3_600_000, { tx: committed });
    await committed.commit();
    expect(await store.claim(key, T0 + 1, T0 + 60_000)).toBe("duplicate");
  });

  test("complete() joins a drizzle transaction: thrown inside it, the record stays processing", async () => {
    const db = drizzle(client);
    expect(await store.claim(key, T0, T0 + 60_000)).toBe("claimed");
    await expect(
      db.transaction(async (tx) => {
        await store.complete(key, T0, T0 + 3_600_000, { tx });
        throw new Error("business write failed");
      }),
    ).rejects.toThrow("business write failed");
    expect(await statusOf(key.id)).toBe("processing");
    await db.transaction((tx) => store.complete(key, T0, T0 + 3_600_000, { tx }));
    expect(await statusOf(key.id)).toBe("done");
  });

  test("behind the gate, 10 concurrent deliveries of one signed webhook run the handler once", async () => {
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

  test("behind the gate, a handler that throws releases the id so the sender's retry runs it", async () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const receiver = Receiver({ sources: { billing: { verify: secret, dedup: store } } });
    const body = new TextEncoder().encode('{"type":"invoice.paid"}');
    const headers = sign({ id: "msg_retry", timestamp: new Date(), body, keys: [secret] });
    const failed = await receiver.handle("billing", { body, headers }, () => {
      throw new Error("database down");
    });
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(await statusOf("msg_retry")).toBeUndefined();
    let runs = 0;
    const retried = await receiver.handle("billing", { body, headers }, () => {
      runs++;
    });
    expect(retried.status).toBe(200);
    expect(runs).toBe(1);
    expect(await statusOf("msg_retry")).toBe("done");
  });
});
