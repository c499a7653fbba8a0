import { countDeliveries } from "./count-deliveries.js";
import { newEndpoint, newMessage, T0 } from "@postel/core/storage/conformance";
import { afterEach, expect, test } from "vitest";
import { SqliteStorage } from "../src/index.js";
import { runTogether, startChild } from "./child-process.js";
import { tempDatabase } from "./temp-db.js";

const MESSAGES = 200;
const ENDPOINTS = 10;

const db = tempDatabase();
afterEach(() => db.remove());

/** 200 messages fanned out to 10 endpoints: 2,000 deliveries, all due at T0. */
async function seed(): Promise<string[]> {
  const storage = SqliteStorage({ url: db.url });
  const endpointIds = Array.from({ length: ENDPOINTS }, (_, i) => `ep_${i}`);
  for (const id of endpointIds) {
    await storage.createEndpoint(newEndpoint({ id, url: `https://receiver.example.com/${id}` }));
  }
  for (let i = 0; i < MESSAGES; i++) {
    const id = `msg_${String(i).padStart(4, "0")}`;
    await storage.enqueue(newMessage({ id, payload: "{}" }));
  }
  const claimed = await storage.claimFanout({ owner: "seed", now: T0, until: T0 + 60_000, limit: MESSAGES });
  await storage.recordFanout(
    claimed.map(({ message, token }) => ({
      messageId: message.id,
      token,
      deliveries: endpointIds.map((endpointId) => ({
        id: `dlv_${message.id}_${endpointId}`,
        messageId: message.id,
        endpointId,
        webhookId: `wh_${message.id}_${endpointId}`,
        createdAt: T0,
      })),
    })),
    T0,
  );
  const all = (await Promise.all(claimed.map(({ message }) => storage.listDeliveries(message.id)))).flat();
  await storage.close();
  return all.map((delivery) => delivery.id);
}

test("two processes claiming from one file take every one of 2,000 due deliveries exactly once", async () => {
  const expected = await seed();
  expect(expected).toHaveLength(MESSAGES * ENDPOINTS);

  const [first, second] = (
    await runTogether([
      startChild("claim-child.ts", [db.url, "worker-a", String(T0 + 1)]),
      startChild("claim-child.ts", [db.url, "worker-b", String(T0 + 1)]),
    ])
  ).map((line) => JSON.parse(line) as string[]);

  const union = [...first!, ...second!];
  expect(new Set(union).size).toBe(union.length); // nobody claimed a delivery twice
  expect([...union].sort()).toEqual([...expected].sort());
  // Both really ran at once (each took part of the work), so the test exercised the contention.
  expect(first!.length).toBeGreaterThan(0);
  expect(second!.length).toBeGreaterThan(0);

  const storage = SqliteStorage({ url: db.url });
  expect(await countDeliveries(storage.client)).toEqual({ succeeded: MESSAGES * ENDPOINTS });
  expect(await storage.operations.listMessages({ limit: MESSAGES, status: "dispatched" })).toHaveLength(
    MESSAGES,
  );
  expect(await storage.endpointHealth("ep_0", T0)).toEqual({ attempts: MESSAGES, failures: 0 });
  await storage.close();
}, 60_000);
