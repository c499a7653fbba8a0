import { describe, expect, test } from "vitest";
import { Custom, ExponentialBackoff, LinearBackoff } from "../src/backoff.js";
import { harness } from "./support/harness.js";

const NO_JITTER = { jitter: 0 };

async function deliveryOf(h: Awaited<ReturnType<typeof harness>>, messageId: string) {
  const [delivery] = await h.postel.outbound.messages.deliveries(messageId);
  if (!delivery) throw new Error("no delivery");
  return delivery;
}

describe("retries", () => {
  test("retries a 500 after the first scheduled delay, and not before", async () => {
    const h = await harness({ retryPolicy: ExponentialBackoff(NO_JITTER) });
    h.receiver.script("/hook", (i) => (i === 0 ? 500 : 200));
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    await h.postel.drain();
    expect(h.receiver.on("/hook")).toHaveLength(1);
    const pending = await deliveryOf(h, id);
    expect(pending).toMatchObject({
      status: "pending",
      retriesUsed: 1,
      nextAttemptAt: h.clock.now() + 5_000,
    });

    h.clock.advance("4999ms");
    await h.postel.drain();
    expect(h.receiver.on("/hook")).toHaveLength(1);
    h.clock.advance("1ms");
    await h.postel.drain();
    expect(h.receiver.on("/hook")).toHaveLength(2);
    expect((await deliveryOf(h, id)).status).toBe("succeeded");
    expect((await h.postel.outbound.messages.get(id))?.status).toBe("dispatched");
  });

  test("keeps webhook-id stable across retries while webhook-timestamp moves", async () => {
    const h = await harness({ retryPolicy: ExponentialBackoff(NO_JITTER) });
    h.receiver.script("/hook", (i) => (i === 0 ? 503 : 200));
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    await h.postel.drain();
    h.clock.advance("5s");
    await h.postel.drain();
    const [first, second] = h.receiver.on("/hook");
    expect(first?.headers["webhook-id"]).toBe(id);
    expect(second?.headers["webhook-id"]).toBe(id);
    expect(Number(second?.headers["webhook-timestamp"]) - Number(first?.headers["webhook-timestamp"])).toBe(
      5,
    );
  });

  test("dead-letters after the last retry fails: 1 + maxAttempts requests in all", async () => {
    const h = await harness({ retryPolicy: LinearBackoff({ maxAttempts: 2, step: "10s" }) });
    h.receiver.script("/hook", 500);
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    const deadLetters: string[] = [];
    h.postel.on("dead-letter", (e) => deadLetters.push(e.status));
    await h.postel.drain();
    h.clock.advance("10s"); // retry 1 waits 1 × step
    await h.postel.drain();
    h.clock.advance("19s");
    await h.postel.drain();
    expect(h.receiver.on("/hook")).toHaveLength(2);
    h.clock.advance("1s"); // retry 2 waits 2 × step
    await h.postel.drain();
    h.clock.advance("1d");
    await h.postel.drain();
    expect(h.receiver.on("/hook")).toHaveLength(3);
    expect((await deliveryOf(h, id)).status).toBe("dead-lettered");
    expect((await h.postel.outbound.messages.get(id))?.status).toBe("dead-lettered");
    expect(deadLetters).toEqual(["dead-lettered"]);
    const attempts = await h.postel.outbound.messages.attempts(id);
    expect(attempts.map((a) => [a.attemptNumber, a.statusCode, a.outcome])).toEqual([
      [1, 500, "retryable"],
      [2, 500, "retryable"],
      [3, 500, "retryable"],
    ]);
  });

  test("maxAttempts 0 dead-letters after the initial attempt", async () => {
    const h = await harness({ retryPolicy: ExponentialBackoff({ maxAttempts: 0 }) });
    h.receiver.script("/hook", 502);
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    await h.postel.drain();
    expect((await deliveryOf(h, id)).status).toBe("dead-lettered");
  });

  test.each([400, 401, 404, 410, 422])("a %i is failed-permanent: no retry", async (status) => {
    const h = await harness();
    h.receiver.script("/hook", status);
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    await h.postel.drain();
    h.clock.advance("7d");
    await h.postel.drain();
    expect(h.receiver.on("/hook")).toHaveLength(1);
    expect(await deliveryOf(h, id)).toMatchObject({ status: "failed", retriesUsed: 0 });
    const [attempt] = await h.postel.outbound.messages.attempts(id);
    expect(attempt).toMatchObject({ outcome: "permanent", statusCode: status, error: `HTTP ${status}` });
  });

  test("honours a 429 Retry-After longer than the schedule, in seconds", async () => {
    const h = await harness({ retryPolicy: ExponentialBackoff() });
    h.receiver.script("/hook", (i) => (i === 0 ? { status: 429, headers: { "retry-after": "120" } } : 200));
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    await h.postel.drain();
    expect((await deliveryOf(h, id)).nextAttemptAt).toBe(h.clock.now() + 120_000);
    h.clock.advance("119s");
    await h.postel.drain();
    expect(h.receiver.on("/hook")).toHaveLength(1);
    h.clock.advance("1s");
    await h.postel.drain();
    expect(h.receiver.on("/hook")).toHaveLength(2);
  });

  test("honours a Retry-After given as an HTTP-date on 503", async () => {
    const h = await harness();
    const at = () => new Date(h.clock.now() + 600_000).toUTCString();
    h.receiver.script("/hook", (i) => (i === 0 ? { status: 503, headers: { "retry-after": at() } } : 200));
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    await h.postel.drain();
    expect((await deliveryOf(h, id)).nextAttemptAt).toBe(h.clock.now() + 600_000);
  });

  test("a Retry-After shorter than the schedule does not shorten it", async () => {
    const h = await harness({ retryPolicy: ExponentialBackoff({ schedule: ["1m"], jitter: 0 }) });
    h.receiver.script("/hook", { status: 429, headers: { "retry-after": "1" } });
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    await h.postel.drain();
    expect((await deliveryOf(h, id)).nextAttemptAt).toBe(h.clock.now() + 60_000);
  });

  test("caps Retry-After at http.maxRetryAfter", async () => {
    const h = await harness({ http: { maxRetryAfter: "1h" } });
    h.receiver.script("/hook", { status: 429, headers: { "retry-after": String(7 * 86_400) } });
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    await h.postel.drain();
    const { nextAttemptAt } = await deliveryOf(h, id);
    expect(nextAttemptAt - h.clock.now()).toBe(3_600_000);
  });

  test("jitter keeps the first retry within ±20% of 5s", async () => {
    const h = await harness();
    h.receiver.script("/hook", 500);
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const ids = await Promise.all(
      Array.from({ length: 20 }, (_, i) => h.postel.outbound.send({ type: "a", data: i })),
    );
    await h.postel.drain();
    const delays = await Promise.all(
      ids.map(async ({ id }) => (await deliveryOf(h, id)).nextAttemptAt - h.clock.now()),
    );
    for (const delay of delays) {
      expect(delay).toBeGreaterThanOrEqual(4_000);
      expect(delay).toBeLessThanOrEqual(6_000);
    }
    expect(new Set(delays).size).toBeGreaterThan(1);
  });

  test.each([
    ["a 301 (redirects are not followed)", { status: 301, headers: { location: "/elsewhere" } }, 301, null],
    ["a reset connection", "reset", null, "CONNECTION_RESET"],
  ] as const)("%s is retryable", async (_name, reply, statusCode, errorCode) => {
    const h = await harness();
    h.receiver.script("/hook", reply);
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    await h.postel.drain();
    expect(h.receiver.on("/elsewhere")).toHaveLength(0);
    expect((await deliveryOf(h, id)).status).toBe("pending");
    const [attempt] = await h.postel.outbound.messages.attempts(id);
    expect(attempt).toMatchObject({ outcome: "retryable", statusCode, errorCode });
  });

  test("a receiver that never answers times out and is retried", async () => {
    const h = await harness({ http: { timeout: "300ms" } });
    h.receiver.script("/hook", (i) => (i === 0 ? "hang" : 200));
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    await h.postel.drain();
    const [attempt] = await h.postel.outbound.messages.attempts(id);
    expect(attempt).toMatchObject({ outcome: "retryable", errorCode: "TIMEOUT" });
  });

  test("keeps retry state per delivery: a failing endpoint never delays or spends another's budget", async () => {
    const h = await harness({ retryPolicy: LinearBackoff({ maxAttempts: 1, step: "1m" }) });
    h.receiver.script("/bad", 500);
    const good = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/good") });
    const bad = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/bad") });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    await h.postel.drain();
    const deliveries = await h.postel.outbound.messages.deliveries(id);
    const byEndpoint = new Map(deliveries.map((d) => [d.endpointId, d]));
    expect(byEndpoint.get(good.id)).toMatchObject({ status: "succeeded", retriesUsed: 0 });
    expect(byEndpoint.get(bad.id)).toMatchObject({ status: "pending", retriesUsed: 1 });
    expect((await h.postel.outbound.messages.get(id))?.status).toBe("pending");
    h.clock.advance("1m");
    await h.postel.drain();
    expect(h.receiver.on("/good")).toHaveLength(1);
    expect((await h.postel.outbound.messages.get(id))?.status).toBe("dead-lettered");
  });

  test("a per-endpoint retry policy overrides the default, and survives as a stored spec", async () => {
    const h = await harness({ retryPolicy: ExponentialBackoff(NO_JITTER) });
    h.receiver.script("/strict", 500);
    await h.postel.outbound.endpoints.create({
      url: h.receiver.url("/strict"),
      retryPolicy: LinearBackoff({ maxAttempts: 3, step: "10s" }),
    });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    await h.postel.drain();
    expect((await deliveryOf(h, id)).nextAttemptAt).toBe(h.clock.now() + 10_000);
  });

  test("Custom gets the number of failed attempts so far; unregistered Custom policies are refused on endpoints", async () => {
    const seen: number[] = [];
    const custom = Custom({
      maxAttempts: 3,
      compute: (failed) => {
        seen.push(failed);
        return `${failed * 7}s`;
      },
    });
    const h = await harness({ retryPolicy: custom, retryPolicies: { sla: custom } });
    h.receiver.script("/hook", 500);
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    await h.postel.drain();
    expect((await deliveryOf(h, id)).nextAttemptAt).toBe(h.clock.now() + 7_000);
    h.clock.advance("7s");
    await h.postel.drain();
    expect(seen).toEqual([1, 2]);
    await expect(
      h.postel.outbound.endpoints.create({
        url: h.receiver.url("/x"),
        // The types refuse it too: an endpoint stores its policy, and a function cannot be stored.
        // @ts-expect-error a Custom policy is registered in outbound.retryPolicies and named
        retryPolicy: Custom({ maxAttempts: 1, compute: () => "1s" }),
      }),
    ).rejects.toMatchObject({ code: "INVALID_ENDPOINT" });
    await expect(
      h.postel.outbound.endpoints.create({ url: h.receiver.url("/y"), retryPolicy: "sla" }),
    ).resolves.toBeDefined();
    const endpoint = await h.postel.outbound.endpoints.create({
      url: h.receiver.url("/z"),
      retryPolicy: LinearBackoff({ maxAttempts: 2, step: "1m" }),
    });
    await expect(
      h.postel.outbound.endpoints.update(endpoint.id, {
        // @ts-expect-error the same on update
        retryPolicy: Custom({ maxAttempts: 1, compute: () => "1s" }),
      }),
    ).rejects.toMatchObject({ code: "INVALID_ENDPOINT" });
  });
});
