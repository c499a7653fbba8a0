import { expect, test } from "vitest";
import { StorageUnavailableError } from "../src/errors.js";
import { harness } from "./support/harness.js";

// How the workers live through a database that goes away (a failover, a cut session, a standby): on
// the manual clock, with InMemoryStorage made to hang or fail the way a real one does (issue 24).

async function errorsOf(h: Awaited<ReturnType<typeof harness>>) {
  const errors: { context: string; code: unknown; message: string }[] = [];
  h.postel.on("error", ({ context, error }) =>
    errors.push({
      context,
      code: (error as { code?: unknown }).code,
      message: error instanceof Error ? error.message : String(error),
    }),
  );
  return errors;
}

/** Moves the clock in steps, letting real work (HTTP to the receiver) happen in between. */
async function run(h: Awaited<ReturnType<typeof harness>>, ms: number, until: () => boolean = () => false) {
  for (let elapsed = 0; elapsed < ms && !until(); elapsed += 100) {
    await h.clock.advanceAsync(100);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

test("a storage call that never settles fails with STORAGE_TIMEOUT after half a lease; the storage is reset once and the worker delivers", async () => {
  const h = await harness({ workers: { leaseDuration: "10s", pollInterval: "1s" } });
  await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
  const errors = await errorsOf(h);
  let resets = 0;
  h.storage.reset = async () => {
    resets++;
  };
  const claimFanout = h.storage.claimFanout.bind(h.storage);
  let hung = 0;
  h.storage.claimFanout = (claim) => {
    // The first claim is on a session that will never answer.
    if (hung++ === 0) return new Promise(() => {});
    return claimFanout(claim);
  };
  await h.postel.outbound.send({ type: "a", data: 1 });
  await h.postel.start();
  await run(h, 4_900);
  expect(errors).toEqual([]);
  await run(h, 3_000, () => h.receiver.requests.length > 0);
  expect(errors[0]).toMatchObject({ context: "claiming work", code: "STORAGE_TIMEOUT" });
  expect(errors[0]?.message).toMatch(
    /claimFanout\(\) did not settle within 5000 ms \(half the workers' lease\)/,
  );
  expect(resets).toBe(1);
  expect(h.receiver.requests).toHaveLength(1);
});

test("while the storage is unavailable the workers probe it at least every 500 ms, and deliver within a probe of its return", async () => {
  const h = await harness({ workers: { pollInterval: "1s" } });
  await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
  const errors = await errorsOf(h);
  const claimFanout = h.storage.claimFanout.bind(h.storage);
  let down = true;
  let probes = 0;
  h.storage.claimFanout = async (claim) => {
    probes++;
    if (down) throw new StorageUnavailableError("Could not use the database: the connection was refused.");
    return claimFanout(claim);
  };
  await h.postel.outbound.send({ type: "a", data: 1 });
  await h.postel.start();
  await run(h, 10_000);
  // 30 s of doubling backoff would have probed 5 times in 10 s.
  expect(probes).toBeGreaterThanOrEqual(19);
  expect(errors.every((e) => e.code === "STORAGE_UNAVAILABLE")).toBe(true);
  down = false;
  const back = h.clock.now();
  await run(h, 2_000, () => h.receiver.requests.length > 0);
  expect(h.receiver.requests).toHaveLength(1);
  expect(h.clock.now() - back).toBeLessThanOrEqual(600);
});

test("lost wake-ups are reported once; the workers poll every 100 ms and subscribe again until it takes, then poll as configured", async () => {
  const h = await harness({ workers: { pollInterval: "1h" } });
  const errors = await errorsOf(h);
  let lose: ((error: unknown) => void) | undefined;
  let subscribes = 0;
  let refuse = 0;
  h.storage.subscribe = async (_onWake, onLost) => {
    subscribes++;
    if (refuse > 0) {
      refuse--;
      throw new StorageUnavailableError("connection refused");
    }
    lose = onLost;
    return async () => {};
  };
  const claimFanout = h.storage.claimFanout.bind(h.storage);
  let claims = 0;
  h.storage.claimFanout = (claim) => {
    claims++;
    return claimFanout(claim);
  };
  await h.postel.start();
  await run(h, 500);
  expect(subscribes).toBe(1);
  claims = 0;
  await run(h, 2_000);
  // Polling every hour: nothing looked for work in these two seconds.
  expect(claims).toBe(0);

  refuse = 3;
  lose?.(new Error("the LISTEN connection closed"));
  await run(h, 1_000);
  expect(claims).toBeGreaterThanOrEqual(8);
  await run(h, 2_000);
  // Refused three times (0, 200, 400 ms apart, then 800 ms), then it took.
  expect(subscribes).toBe(5);
  expect(errors).toEqual([
    {
      context: "listening for wake-ups",
      code: "STORAGE_UNAVAILABLE",
      message: expect.stringMatching(
        /Wake-ups from other processes stopped \(the LISTEN connection closed\)/,
      ),
    },
  ]);
  claims = 0;
  await run(h, 2_000);
  expect(claims).toBe(0);
});
