import { describe, expect, test } from "vitest";
import { LinearBackoff } from "../src/backoff.js";
import { harness } from "./support/harness.js";

describe("circuit breaker", () => {
  async function tripped() {
    const h = await harness({
      retryPolicy: LinearBackoff({ maxAttempts: 5, step: "10s" }),
      circuitBreaker: { threshold: 0.5, cooldown: "1m", window: "1m", minimumVolume: 4 },
      autoDisable: false,
    });
    h.receiver.script("/down", 500);
    const endpoint = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/down") });
    const events: string[] = [];
    h.postel.on("circuit-open", () => events.push("open"));
    h.postel.on("circuit-close", () => events.push("close"));
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push((await h.postel.outbound.send({ type: "a", data: i })).id);
    await h.postel.drain();
    return { ...h, endpoint, events, ids };
  }

  test("opens when the failure ratio reaches the threshold with the minimum volume", async () => {
    const h = await tripped();
    expect(h.receiver.on("/down")).toHaveLength(4);
    const endpoint = await h.postel.outbound.endpoints.get(h.endpoint.id);
    expect(endpoint).toMatchObject({ state: "circuit-open", circuitOpenUntil: h.clock.now() + 60_000 });
    expect(h.events).toEqual(["open"]);
  });

  test("while open, deliveries make no HTTP call and consume no retry", async () => {
    const h = await tripped();
    const { id } = await h.postel.outbound.send({ type: "a", data: "new" });
    h.clock.advance("10s"); // the first four are due for retry 1
    await h.postel.drain();
    expect(h.receiver.on("/down")).toHaveLength(4);
    const deliveries = await Promise.all([...h.ids, id].map((m) => h.postel.outbound.messages.deliveries(m)));
    for (const [delivery] of deliveries) {
      expect(delivery?.status).toBe("pending");
      expect(delivery?.nextAttemptAt).toBe(
        (await h.postel.outbound.endpoints.get(h.endpoint.id))?.circuitOpenUntil,
      );
    }
    expect(deliveries.map(([d]) => d?.retriesUsed)).toEqual([1, 1, 1, 1, 0]);
  });

  test("after the cooldown one probe decides: a failure re-opens, a success closes and work flows", async () => {
    const h = await tripped();
    h.clock.advance("1m");
    await h.postel.drain();
    expect(h.receiver.on("/down")).toHaveLength(5); // exactly one probe
    let endpoint = await h.postel.outbound.endpoints.get(h.endpoint.id);
    expect(endpoint).toMatchObject({ state: "circuit-open", circuitOpenUntil: h.clock.now() + 60_000 });

    h.receiver.script("/down", 200);
    h.clock.advance("1m");
    await h.postel.drain();
    expect(h.receiver.on("/down")).toHaveLength(6);
    endpoint = await h.postel.outbound.endpoints.get(h.endpoint.id);
    expect(endpoint?.state).toBe("active");
    expect(h.events).toEqual(["open", "open", "close"]);

    h.clock.advance("1m");
    await h.postel.drain();
    const statuses = await Promise.all(
      h.ids.map(async (m) => (await h.postel.outbound.messages.get(m))?.status),
    );
    expect(statuses).toEqual(["dispatched", "dispatched", "dispatched", "dispatched"]);
    expect(h.receiver.on("/down")).toHaveLength(9);
  });

  test("stays closed below the minimum volume", async () => {
    const h = await harness({ circuitBreaker: { threshold: 0.5, minimumVolume: 10 }, autoDisable: false });
    h.receiver.script("/down", 500);
    const endpoint = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/down") });
    for (let i = 0; i < 9; i++) await h.postel.outbound.send({ type: "a", data: i });
    await h.postel.drain();
    expect((await h.postel.outbound.endpoints.get(endpoint.id))?.state).toBe("active");
  });
});

describe("auto-disable", () => {
  test("disables an endpoint whose failures span the window, holds its deliveries, and resumes them on enable()", async () => {
    const h = await harness({
      retryPolicy: LinearBackoff({ maxAttempts: 5, step: "1m" }),
      circuitBreaker: false,
      autoDisable: { failureRate: 0.9, window: "2m", minAttempts: 3 },
    });
    h.receiver.script("/broken", 500);
    const endpoint = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/broken") });
    const disabled: string[] = [];
    h.postel.on("endpoint-disabled", (e) => disabled.push(e.reason));
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await h.postel.outbound.send({ type: "a", data: i })).id);
    await h.postel.drain();
    h.clock.advance("1m"); // retry 1 fails too, but the failures span one minute, not the window
    await h.postel.drain();
    expect((await h.postel.outbound.endpoints.get(endpoint.id))?.state).toBe("active");
    h.clock.advance("2m"); // retry 2: the window's head (retry 1) was failing as well
    await h.postel.drain();
    const after = await h.postel.outbound.endpoints.get(endpoint.id);
    expect(after).toMatchObject({ state: "disabled" });
    expect(after?.disabledReason).toMatch(/failing for over 1m 48s: 6\/6 attempts failed in the last 2m/);
    expect(disabled).toHaveLength(1);

    const late = await h.postel.outbound.send({ type: "a", data: "late" });
    h.clock.advance("10m");
    await h.postel.drain();
    expect(h.receiver.on("/broken")).toHaveLength(9);
    const [held] = await h.postel.outbound.messages.deliveries(late.id);
    expect(held?.status).toBe("held");

    h.receiver.script("/broken", 200);
    await h.postel.outbound.endpoints.enable(endpoint.id);
    expect((await h.postel.outbound.endpoints.get(endpoint.id))?.state).toBe("active");
    await h.postel.drain();
    for (const id of [...ids, late.id])
      expect((await h.postel.outbound.messages.get(id))?.status).toBe("dispatched");
  });

  test("disable() by hand holds deliveries the same way", async () => {
    const h = await harness();
    const endpoint = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/hook") });
    await h.postel.outbound.endpoints.disable(endpoint.id);
    const { id } = await h.postel.outbound.send({ type: "a", data: 1 });
    await h.postel.drain();
    expect(h.receiver.requests).toHaveLength(0);
    expect((await h.postel.outbound.messages.deliveries(id))[0]?.status).toBe("held");
    expect((await h.postel.outbound.endpoints.get(endpoint.id))?.disabledReason).toBe("manual");
  });
});
