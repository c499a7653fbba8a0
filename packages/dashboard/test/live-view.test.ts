import { type Endpoint, LinearBackoff } from "@postel/core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { element, type Harness, startHarness } from "./support/harness.js";

interface LiveJson {
  failed: number;
  deadLetters: number;
  failing: { id: string; failures: number; failureRate: number | null; path: string }[];
  timeline: { at: number; bucketMs: number; points: { start: number; attempts: number; failures: number }[] };
}

describe.each(["postgres", "sqlite"] as const)("the live view on %s", (storageName) => {
  let h: Harness;
  const live = async () => (await (await h.get("/live.json")).json()) as LiveJson;
  const noRetry = LinearBackoff({ maxAttempts: 0, step: "1s", jitter: 0 });

  beforeAll(async () => {
    h = await startHarness(storageName);
  });
  afterAll(() => h?.close());

  test("counts every attempt of the last 15 minutes per 10 s, at any rate", async () => {
    h.receiver.answer("/bulk", 200, "ok");
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/bulk"), types: ["bulk.*"] });
    // Six bursts of 200 attempts 20 s apart, then 50 that fail: more than any sample of 1,000 holds.
    for (let burst = 0; burst < 6; burst++) {
      await h.postel.outbound.sendBatch(
        Array.from({ length: 200 }, (_, i) => ({ type: "bulk.item", data: { burst, i } })),
      );
      await h.postel.drain();
      await h.clock.advanceAsync("20s");
    }
    h.receiver.answer("/bulk", 400, "no");
    await h.postel.outbound.sendBatch(
      Array.from({ length: 50 }, (_, i) => ({ type: "bulk.bad", data: { i } })),
    );
    await h.postel.drain();
    await h.clock.advanceAsync("10s");

    const { timeline } = await live();
    expect(timeline.points).toHaveLength(90);
    expect(timeline.bucketMs).toBe(10_000);
    expect(timeline.points.reduce((sum, p) => sum + p.attempts, 0)).toBe(1_250);
    expect(timeline.points.reduce((sum, p) => sum + p.failures, 0)).toBe(50);
    expect(timeline.points.filter((p) => p.attempts > 0).map((p) => p.attempts)).toEqual([
      200, 200, 200, 200, 200, 200, 50,
    ]);
    // Oldest first, 10 s apart, the last one the bucket under way.
    expect(timeline.points.at(-1)!.start).toBe(Math.floor(h.clock.now() / 10_000) * 10_000);
    expect(timeline.points[1]!.start - timeline.points[0]!.start).toBe(10_000);

    // The page draws the same 15 minutes before any poll: 89 complete buckets, peaking at 20/s.
    const page = await h.text("/");
    const throughput = element(page, "chart-throughput", "svg");
    expect(/points="([^"]*)"/.exec(throughput)![1]!.split(" ")).toHaveLength(89);
    expect(element(page, "chart-throughput-peak", "span")).toContain(">20<");
    expect(element(page, "chart-failures-peak", "span")).toContain(">5<");
  });

  test("ranks the failing endpoints worst first, at most 10, each linked to its page", async () => {
    await h.clock.advanceAsync("10m");
    // flaky fails 2 of 4; healthy never; dead[k] fails k + 2 times (nothing listens on port 1). Flaky
    // is the oldest, so only the failure rate puts dead[0] (2 of 2) above it.
    h.receiver.answer("/flaky", 503, "busy");
    h.receiver.answer("/healthy", 200, "ok");
    const flaky = await h.postel.outbound.endpoints.create({
      url: h.receiver.url("/flaky"),
      types: ["flaky.*"],
      retryPolicy: noRetry,
      circuitBreaker: { minimumVolume: 1000 },
    });
    const healthy = await h.postel.outbound.endpoints.create({
      url: h.receiver.url("/healthy"),
      types: ["healthy.*"],
    });
    await h.clock.advanceAsync("1s");
    const dead: Endpoint[] = [];
    for (let k = 0; k < 10; k++) {
      dead.push(
        await h.postel.outbound.endpoints.create({
          url: `http://127.0.0.1:1/dead-${k}`,
          types: [`dead.${k}`],
          retryPolicy: noRetry,
          circuitBreaker: { minimumVolume: 1000 },
        }),
      );
      await h.postel.outbound.sendBatch(
        Array.from({ length: k + 2 }, (_, i) => ({ type: `dead.${k}`, data: { i } })),
      );
    }
    for (let i = 0; i < 2; i++) await h.postel.outbound.send({ type: "flaky.x", data: { i } });
    for (let i = 0; i < 5; i++) await h.postel.outbound.send({ type: "healthy.x", data: { i } });
    await h.postel.drain();
    h.receiver.answer("/flaky", 200, "ok");
    for (let i = 0; i < 2; i++) await h.postel.outbound.send({ type: "flaky.x", data: { i } });
    await h.postel.drain();

    const { failing, failed, deadLetters } = await live();
    // dead[0] and flaky both failed twice: dead[0] (100%) ranks above flaky (50%), which is 11th.
    const expected = [...dead].reverse().map((e) => e.id);
    expect(failing.map((e) => e.id)).toEqual(expected);
    expect(failing[0]).toMatchObject({
      failures: 11,
      failureRate: 1,
      path: `/postel/endpoints/${dead[9]!.id}`,
    });
    expect(failing.map((e) => e.id)).not.toContain(flaky.id);
    expect(failing.map((e) => e.id)).not.toContain(healthy.id);
    expect(failed).toBe(50);
    expect(deadLetters).toBe(67);

    const page = await h.text("/");
    const rows = element(page, "failing-rows", "tbody");
    expect([...rows.matchAll(/href="\/postel\/endpoints\/([^"]+)"/g)].map((m) => m[1])).toEqual(expected);
    expect(element(page, "failed", "span")).toContain(">50<");

    // Once its failures leave the 5-minute window, nobody is ranked.
    await h.clock.advanceAsync("6m");
    expect((await live()).failing).toEqual([]);
    expect(element(await h.text("/"), "failing-rows", "tbody")).toContain(
      "No endpoint failed in the last 5 min.",
    );
  });
});
