import { expect } from "vitest";
import type { OutboundOptions } from "../../config/options.js";
import { group, type ScenarioContext } from "./context.js";
import type { Reply } from "./receiver.js";

const MINUTE = 60_000;
type Transition = "circuit-open" | "circuit-close" | "endpoint-disabled";

/**
 * Auto-disable means "broken for long": the breaker acts first, a burst of failures never disables
 * an endpoint, and only failures that span the whole window do.
 */
export function autoDisableScenarios(context: ScenarioContext): void {
  /** A Postel with one endpoint answering `reply` on `/hook`, its transitions recorded in order. */
  async function endpointAnswering(reply: Reply, outbound: Partial<OutboundOptions> = {}) {
    const s = await context.start(outbound);
    s.receiver.script("/hook", reply);
    const endpoint = await s.postel.outbound.endpoints.create({ url: s.receiver.url("/hook") });
    const startedAt = s.clock.now();
    const transitions: { kind: Transition; minute: number; reason?: string }[] = [];
    const record = (kind: Transition, reason?: string) =>
      transitions.push({ kind, minute: (s.clock.now() - startedAt) / MINUTE, ...(reason ? { reason } : {}) });
    s.postel.on("circuit-open", () => record("circuit-open"));
    s.postel.on("circuit-close", () => record("circuit-close"));
    s.postel.on("endpoint-disabled", (e) => record("endpoint-disabled", e.reason));
    const ids: string[] = [];
    const send = async (count: number) => {
      for (let i = 0; i < count; i++)
        ids.push((await s.postel.outbound.send({ type: "order.created", data: { n: ids.length } })).id);
    };
    const state = async () => (await s.postel.outbound.endpoints.get(endpoint.id))?.state;
    return {
      ...s,
      endpoint,
      ids,
      transitions,
      kinds: () => transitions.map((t) => t.kind),
      send,
      state,
      /** Minute after minute: advance the clock, send one message, drain; `check` runs after each drain. */
      async everyMinute(minutes: number, check?: (minute: number) => Promise<void>) {
        for (let i = 0; i < minutes; i++) {
          s.clock.advance(MINUTE);
          await send(1);
          await s.postel.drain();
          await check?.((s.clock.now() - startedAt) / MINUTE);
        }
      },
      /** Status of every message sent so far. */
      statuses: () => Promise.all(ids.map(async (id) => (await s.postel.outbound.messages.get(id))?.status)),
      /** Status of every delivery sent so far. */
      deliveryStatuses: async () =>
        (await Promise.all(ids.map((id) => s.postel.outbound.messages.deliveries(id)))).flatMap((ds) =>
          ds.map((d) => d.status),
        ),
    };
  }

  group(context, "auto-disable", (test) => {
    test("a burst of failures opens the circuit and does not disable the endpoint", async () => {
      const e = await endpointAnswering(503);
      await e.send(40);
      await e.postel.drain();
      expect(e.receiver.on("/hook")).toHaveLength(40);
      expect(await e.state()).toBe("circuit-open");
      expect(e.kinds()).toEqual(["circuit-open"]);

      e.receiver.script("/hook", 200);
      e.clock.advance("5m"); // past the cooldown: one probe, which succeeds
      await e.postel.drain();
      expect(await e.state()).toBe("active");
      e.clock.advance("1m");
      await e.postel.drain();
      expect(await e.statuses()).toEqual(e.ids.map(() => "dispatched"));
      expect(e.kinds()).toEqual(["circuit-open", "circuit-close"]);
    });

    test("an endpoint failing for 30 minutes stays circuit-open and is never disabled", async () => {
      const e = await endpointAnswering(503);
      await e.send(20);
      await e.postel.drain();
      await e.everyMinute(30, async () => expect(await e.state()).toBe("circuit-open"));

      e.receiver.script("/hook", 200);
      await e.everyMinute(60);
      expect(await e.state()).toBe("active");
      expect(e.kinds()).not.toContain("endpoint-disabled");
      expect(e.kinds().at(-1)).toBe("circuit-close");
      e.clock.advance("1d"); // the last retries of the first messages are due
      await e.postel.drain();
      expect(await e.statuses()).toEqual(e.ids.map(() => "dispatched"));
    });

    for (const reply of [503, "reset"] as const) {
      test(`a dead endpoint (${reply}) is disabled after about an hour; its deliveries are held and resume on enable()`, async () => {
        const e = await endpointAnswering(reply);
        await e.send(20);
        await e.postel.drain();
        await e.everyMinute(45);
        expect(await e.state()).toBe("circuit-open");
        expect(e.kinds()).not.toContain("endpoint-disabled");

        await e.everyMinute(25);
        expect(await e.state()).toBe("disabled");
        const disabled = e.transitions.filter((t) => t.kind === "endpoint-disabled");
        expect(disabled).toHaveLength(1);
        // The failures must reach into the window's head (two 5m cooldowns and a 10 s bucket): ≥ 49m50s.
        expect(disabled[0]!.minute).toBeGreaterThanOrEqual(60 - 10 - 1 / 6);
        expect(disabled[0]!.reason).toMatch(
          /failing for over 49m 50s: \d+\/\d+ attempts failed in the last 1h/,
        );
        expect(e.kinds()[0]).toBe("circuit-open");

        const seen = e.receiver.on("/hook").length;
        await e.send(3);
        await e.everyMinute(10);
        expect(e.receiver.on("/hook")).toHaveLength(seen);
        const held = await e.deliveryStatuses();
        expect(held).toContain("held");
        expect(held.every((status) => status === "held" || status === "pending")).toBe(true);

        e.receiver.script("/hook", 200);
        await e.postel.outbound.endpoints.enable(e.endpoint.id);
        await e.postel.drain();
        e.clock.advance("1d");
        await e.postel.drain();
        expect(await e.statuses()).toEqual(e.ids.map(() => "dispatched"));
      });
    }

    test("without a breaker, a burst of failures does not disable the endpoint", async () => {
      const e = await endpointAnswering(503, { circuitBreaker: false });
      await e.send(40);
      await e.postel.drain();
      expect(e.receiver.on("/hook")).toHaveLength(40);
      expect(await e.state()).toBe("active");

      e.receiver.script("/hook", 200);
      e.clock.advance("10s"); // the first retries are due
      await e.postel.drain();
      expect(await e.statuses()).toEqual(e.ids.map(() => "dispatched"));
      expect(e.kinds()).toEqual([]);
    });

    test("without a breaker, failures that span the window disable the endpoint", async () => {
      const e = await endpointAnswering(503, { circuitBreaker: false });
      await e.send(1);
      await e.postel.drain();
      await e.everyMinute(50);
      expect(await e.state()).toBe("active");

      await e.everyMinute(15);
      expect(await e.state()).toBe("disabled");
      expect(e.kinds()).toEqual(["endpoint-disabled"]);
      // The failures must reach into the window's head (its first tenth): ≥ 54m.
      expect(e.transitions[0]!.minute).toBeGreaterThanOrEqual(54);
    });

    test("the breaker acts first: a failing endpoint opens its circuit before it can be disabled", async () => {
      const e = await endpointAnswering(503, {
        circuitBreaker: { cooldown: "1m", minimumVolume: 5 },
        autoDisable: { window: "10m", minAttempts: 5 },
      });
      await e.send(10);
      await e.postel.drain();
      expect(e.kinds()).toEqual(["circuit-open"]);
      await e.everyMinute(15);
      const kinds = e.kinds();
      const disabledAt = kinds.indexOf("endpoint-disabled");
      // Every transition before it re-opened the circuit after a failed probe: disabled from circuit-open.
      expect(kinds.slice(0, disabledAt)).toEqual(Array(disabledAt).fill("circuit-open"));
      expect(disabledAt).toBeGreaterThan(1);
      // The failures must reach into the window's head (two 1m cooldowns and a 10 s bucket): ≥ 7m50s.
      expect(e.transitions[disabledAt]!.minute).toBeGreaterThanOrEqual(10 - 2 - 1 / 6);
      expect(await e.state()).toBe("disabled");
    });
  });
}
