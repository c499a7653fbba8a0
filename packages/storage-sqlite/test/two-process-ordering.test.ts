import { newEndpoint, newMessage, T0 } from "@postel/core/storage/conformance";
import { afterEach, expect, test } from "vitest";
import { SqliteStorage } from "../src/index.js";
import { runTogether, startChild } from "./child-process.js";
import { countDeliveries } from "./count-deliveries.js";
import { tempDatabase } from "./temp-db.js";

const KEYS = 6;
const PER_KEY = 20;
const ENDPOINTS = ["ep_a", "ep_b", "ep_c"];

const db = tempDatabase();
afterEach(() => db.remove());

/** 120 messages over 6 ordering keys, interleaved, not fanned out yet; 3 endpoints. */
async function seed(): Promise<void> {
  const storage = SqliteStorage({ url: db.url });
  for (const id of ENDPOINTS) {
    await storage.createEndpoint(newEndpoint({ id, url: `https://receiver.example.com/${id}` }));
  }
  for (let i = 0; i < KEYS * PER_KEY; i++) {
    const id = `msg_${String(i).padStart(4, "0")}`;
    await storage.enqueue(newMessage({ id, payload: "{}", orderingKey: `key_${i % KEYS}` }));
  }
  await storage.close();
}

test("two processes fanning out and delivering keyed messages from one file keep one head per key, in message id order", async () => {
  await seed();
  const args = (owner: string) => [db.url, owner, String(T0), JSON.stringify(ENDPOINTS)];
  const results = (
    await runTogether([
      startChild("ordering-child.ts", args("worker-a")),
      startChild("ordering-child.ts", args("worker-b")),
    ])
  ).map((line) => JSON.parse(line) as { claimed: string[]; violations: string[] });

  for (const { violations } of results) expect(violations).toEqual([]);
  const union = results.flatMap((result) => result.claimed);
  expect(new Set(union).size).toBe(union.length); // nobody delivered a delivery twice
  expect(union).toHaveLength(KEYS * PER_KEY * ENDPOINTS.length);
  // Both really took part, so the keys' heads moved between the processes.
  for (const { claimed } of results) expect(claimed.length).toBeGreaterThan(0);

  const storage = SqliteStorage({ url: db.url });
  expect(await countDeliveries(storage.client)).toEqual({ succeeded: KEYS * PER_KEY * ENDPOINTS.length });
  await storage.close();
}, 120_000);
