import { describe, expect, test } from "vitest";
import { ExponentialBackoff } from "../src/backoff.js";
import { isPostelError } from "../src/errors.js";
import { HEALTH_BUCKET_MS } from "../src/storage/storage.js";
import { harness } from "./support/harness.js";

/** The `code` of what `fn` rejected with (fails the test when it resolved). */
async function codeOf(fn: () => Promise<unknown>): Promise<string> {
  const error = await fn().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isPostelError(error)).toBe(true);
  return (error as { code: string }).code;
}

/** Sends `n` messages and drains them; one clock step between them so their attempts keep order. */
async function sendAndDrain(h: Awaited<ReturnType<typeof harness>>, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await h.postel.outbound.send({ type: "order.created", data: { i } });
    await h.postel.drain();
    h.clock.advance(1_000);
  }
}

describe("endpoints.activity", () => {
  test("names the culprit: the last status, error and snippet, the last success and the first failure after it", async () => {
    const h = await harness({ retryPolicy: ExponentialBackoff({ maxAttempts: 0 }) });
    h.receiver.script("/shop", (index) =>
      index < 2 ? 200 : { status: 503, body: "upstream database is down" },
    );
    const shop = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/shop") });
    await sendAndDrain(h, 2);
    const successes = (await h.postel.outbound.attempts.after({ since: 0, limit: 10 })).map(
      (a) => a.startedAt,
    );
    h.clock.advance("2m");
    await sendAndDrain(h, 3);

    const activity = await h.postel.outbound.endpoints.activity(shop.id);
    const all = await h.postel.outbound.attempts.after({ since: 0, limit: 10 });
    expect(all).toHaveLength(5);
    expect(activity.recent.map((a) => a.id)).toEqual(all.map((a) => a.id).reverse());
    expect(activity.lastAttempt).toMatchObject({ statusCode: 503, outcome: "retryable" });
    expect(activity.lastAttempt?.responseSnippet).toContain("upstream database is down");
    expect(activity.lastFailure?.id).toBe(activity.lastAttempt?.id);
    expect(activity.lastSuccess).toEqual({ at: successes[1], exact: true });
    expect(activity.failingSince).toEqual({ at: all[2]!.startedAt, exact: true });
    expect(activity).toMatchObject({ state: "active", nextProbeAt: null, waitingForTraffic: false });
  });

  test("beyond the newest attempts, tells the last success and the failing run from the health buckets, to the bucket", async () => {
    const h = await harness({ retryPolicy: ExponentialBackoff({ maxAttempts: 0 }) });
    h.receiver.script("/shop", (index) => (index < 1 ? 200 : 500));
    const shop = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/shop") });
    await sendAndDrain(h, 1);
    const [success] = await h.postel.outbound.attempts.after({ since: 0 });
    h.clock.advance("5m");
    const failing = h.clock.now();
    await sendAndDrain(h, 4);

    const activity = await h.postel.outbound.endpoints.activity(shop.id, { recent: 2 });
    expect(activity.recent).toHaveLength(2);
    expect(activity.recent.every((a) => a.statusCode === 500)).toBe(true);
    const bucket = (t: number) => Math.floor(t / HEALTH_BUCKET_MS) * HEALTH_BUCKET_MS;
    expect(activity.lastSuccess).toEqual({ at: bucket(success!.startedAt), exact: false });
    expect(activity.failingSince).toEqual({ at: bucket(failing), exact: false });
  });

  test("an endpoint whose newest attempt succeeded is not failing, whatever came before", async () => {
    const h = await harness({ retryPolicy: ExponentialBackoff({ maxAttempts: 0 }) });
    h.receiver.script("/shop", (index) => (index < 3 ? 500 : 200));
    const shop = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/shop") });
    await sendAndDrain(h, 4);
    const activity = await h.postel.outbound.endpoints.activity(shop.id);
    expect(activity.failingSince).toBeNull();
    expect(activity.lastSuccess?.exact).toBe(true);
    expect(activity.lastFailure?.statusCode).toBe(500);
    expect(activity.recent).toHaveLength(4);
  });

  test("an endpoint that never had an attempt has no activity, and says so", async () => {
    const h = await harness();
    const idle = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/idle") });
    expect(await h.postel.outbound.endpoints.activity(idle.id)).toMatchObject({
      lastAttempt: null,
      lastFailure: null,
      lastSuccess: null,
      failingSince: null,
      recent: [],
      lookbackMs: 86_400_000,
    });
  });

  test("an open circuit shows its next probe while it cools down, then waits for traffic", async () => {
    const h = await harness();
    const shop = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/shop") });
    const now = h.clock.now();
    await h.storage.transitionEndpoint(
      shop.id,
      { state: "active", circuitOpenUntil: null },
      { state: "circuit-open", circuitOpenUntil: now + 30_000, disabledReason: null },
      now,
    );
    expect(await h.postel.outbound.endpoints.activity(shop.id)).toMatchObject({
      state: "circuit-open",
      nextProbeAt: now + 30_000,
      waitingForTraffic: false,
    });
    h.clock.advance("31s");
    expect(await h.postel.outbound.endpoints.activity(shop.id)).toMatchObject({
      nextProbeAt: null,
      waitingForTraffic: true,
    });
  });

  test("a busy endpoint's newest attempts are its newest, read from seconds of the feed, never all of it", async () => {
    const h = await harness();
    const busy = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/busy") });
    // 1,200 attempts over 12 s, 100 every second: one bucket and a bit of the next.
    for (let second = 0; second < 12; second++) {
      await h.postel.outbound.sendBatch(
        Array.from({ length: 100 }, (_, i) => ({ type: "order.created", data: { second, i } })),
      );
      await h.postel.drain();
      h.clock.advance(1_000);
    }
    const feed = h.storage.operations!.attemptsAfter!.bind(h.storage);
    const everything = [
      ...(await feed({ after: "att_", limit: 1_000 })),
      ...(await feed({ after: (await feed({ after: "att_", limit: 1_000 })).at(-1)!.id, limit: 1_000 })),
    ];
    expect(everything).toHaveLength(1_200);
    const pages: number[] = [];
    h.storage.operations!.attemptsAfter = async (query) => {
      const page = await feed(query);
      pages.push(page.length);
      return page;
    };
    const activity = await h.postel.outbound.endpoints.activity(busy.id, { recent: 20 });
    expect(activity.recent.map((a) => a.id)).toEqual(
      everything
        .slice(-20)
        .reverse()
        .map((a) => a.id),
    );
    expect(pages.length).toBeGreaterThanOrEqual(1);
    expect(Math.max(...pages)).toBeLessThan(500);
  });

  test("works on a storage without health buckets, from the last 15 minutes of the feed", async () => {
    const h = await harness({ retryPolicy: ExponentialBackoff({ maxAttempts: 0 }) });
    h.receiver.script("/shop", (index) => (index < 1 ? 200 : 500));
    const shop = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/shop") });
    await sendAndDrain(h, 2);
    delete (h.storage.operations as { healthBuckets?: unknown }).healthBuckets;
    const activity = await h.postel.outbound.endpoints.activity(shop.id);
    expect(activity.recent).toHaveLength(2);
    expect(activity.lastSuccess?.exact).toBe(true);
    expect(activity.failingSince?.at).toBe(activity.lastAttempt?.startedAt);
  });

  test("refuses an unknown endpoint and a bad option before reading anything", async () => {
    const h = await harness();
    const shop = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/shop") });
    expect(await codeOf(() => h.postel.outbound.endpoints.activity("ep_nope"))).toBe("ENDPOINT_NOT_FOUND");
    expect(await codeOf(() => h.postel.outbound.endpoints.activity(shop.id, { recent: 0 }))).toBe(
      "INVALID_ARGUMENT",
    );
    expect(await codeOf(() => h.postel.outbound.endpoints.activity(shop.id, { recent: 101 }))).toBe(
      "INVALID_ARGUMENT",
    );
  });
});

describe("timeline", () => {
  test("gives attempts and failures per 10 s over the window, empty buckets included, for all endpoints or one", async () => {
    const h = await harness({ retryPolicy: ExponentialBackoff({ maxAttempts: 0 }) });
    h.clock.set(Math.ceil(h.clock.now() / HEALTH_BUCKET_MS) * HEALTH_BUCKET_MS);
    const start = h.clock.now();
    h.receiver.script("/down", 500);
    const up = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/up"), types: ["up.*"] });
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/down"), types: ["down.*"] });
    await h.postel.outbound.sendBatch([
      { type: "up.a", data: {} },
      { type: "up.b", data: {} },
      { type: "down.a", data: {} },
    ]);
    await h.postel.drain();
    h.clock.advance("30s");
    await h.postel.outbound.send({ type: "down.b", data: {} });
    await h.postel.drain();
    h.clock.advance("5s");

    const all = await h.postel.outbound.timeline({ window: "1m" });
    expect(all.bucketMs).toBe(HEALTH_BUCKET_MS);
    expect(all.points).toHaveLength(6);
    expect(all.points.at(-1)!.start).toBe(start + 30_000);
    const at = (t: number) => all.points.find((p) => p.start === t);
    expect(at(start)).toEqual({ start, attempts: 3, failures: 1 });
    expect(at(start + 10_000)).toEqual({ start: start + 10_000, attempts: 0, failures: 0 });
    expect(at(start + 30_000)).toEqual({ start: start + 30_000, attempts: 1, failures: 1 });
    const sum = all.points.reduce((n, p) => n + p.attempts, 0);
    expect(sum).toBe(4);

    const mine = await h.postel.outbound.timeline({ window: "1m", endpointId: up.id });
    expect(mine.points.reduce((n, p) => n + p.attempts, 0)).toBe(2);
    expect(mine.points.reduce((n, p) => n + p.failures, 0)).toBe(0);
    expect((await h.postel.outbound.timeline()).points).toHaveLength(90);
  });

  test("refuses a window over a day, and a storage without health buckets, with coded errors", async () => {
    const h = await harness();
    expect(await codeOf(() => h.postel.outbound.timeline({ window: "2d" }))).toBe("INVALID_ARGUMENT");
    expect(await codeOf(() => h.postel.outbound.timeline({ window: 0 }))).toBe("INVALID_ARGUMENT");
    delete (h.storage.operations as { healthBuckets?: unknown }).healthBuckets;
    expect(await codeOf(() => h.postel.outbound.timeline())).toBe("HEALTH_TIMELINE_UNSUPPORTED");
  });
});
