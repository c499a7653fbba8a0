import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type Bundle, bundle } from "./bundle.js";
import { receivingSuite } from "./receiving-suite.js";
import { newId, signed } from "./requests.js";
import { workerd } from "./runtimes.js";

// The Hono fixture on workerd deduplicates in a local D1 database (D1DedupStore), without nodejs_compat.
receivingSuite(workerd, { honoFixture: "hono-worker.ts" });

describe("workerd: the Hono worker's dedup records", () => {
  let mf: Miniflare;
  let built: Bundle | undefined;
  beforeAll(async () => {
    built = await bundle("hono-worker.ts", workerd.target);
    mf = workerd.miniflare(built);
    await mf.ready;
  }, 60_000);
  afterAll(async () => {
    await mf?.dispose();
    built?.remove();
  });

  test("are rows of the D1 database: done once handled, and the retry is a duplicate", async () => {
    const request = signed("standard", newId("d1"));
    const send = () => mf.dispatchFetch(`http://worker.test${request.path}`, request.init);
    const first = await send();
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ received: request.payload });
    const db = await mf.getD1Database("DB");
    const row = await db
      .prepare("SELECT status FROM postel_received WHERE source = ?1 AND id = ?2")
      .bind("standard", request.id)
      .first();
    expect(row).toEqual({ status: "done" });
    const again = await send();
    expect(again.headers.get("x-postel-duplicate")).toBe("true");
    await again.arrayBuffer();
  });
});
