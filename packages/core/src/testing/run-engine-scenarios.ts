import { afterEach, beforeEach, describe } from "vitest";
import { ManualClock } from "../clock.js";
import type { OutboundOptions } from "../config/options.js";
import { ConfigurationError } from "../errors.js";
import { Postel, type PostelInstance } from "../postel.js";
import { seededRandom } from "../random.js";
import type { Storage } from "../storage/storage.js";
import { autoDisableScenarios } from "./scenarios/auto-disable.js";
import { isolationScenarios } from "./scenarios/isolation.js";
import { orderingScenarios } from "./scenarios/ordering.js";
import {
  ENGINE_SCENARIO_GROUPS,
  type EngineScenarioGroup,
  type Scenario,
  type ScenarioContext,
} from "./scenarios/context.js";
import { type ScenarioReceiver, startScenarioReceiver } from "./scenarios/receiver.js";

export type { EngineScenarioGroup, Scenario } from "./scenarios/context.js";
export type { Reply, ScenarioReceiver, SeenRequest } from "./scenarios/receiver.js";

/** How a storage package wires itself into the shared engine scenario suite. */
export interface EngineScenarioOptions<S extends Storage<never> = Storage<unknown>> {
  /** Shown in the top-level `describe` (`"postgres"`, `"sqlite"`, `"memory"`). */
  name: string;
  /** A fresh, empty storage; called before every test. */
  create: () => S | Promise<S>;
  /**
   * Tear down what `create` made; runs after every test once its Postel instances have stopped,
   * before they are closed (closing a Postel closes its storage).
   */
  destroy?: (storage: S) => Promise<void>;
  /** Groups to skip, each with the reason shown in the skipped tests' titles. */
  skip?: Partial<Record<EngineScenarioGroup, string>>;
}

/** What one test opened, torn down after it. */
interface Running<S> {
  storage: S;
  clock: ManualClock;
  receiver: Promise<ScenarioReceiver> | null;
  postels: PostelInstance<Storage<unknown>>[];
}

/**
 * Register the engine scenario suite (vitest `describe`/`test` blocks) for one `Storage`: the whole
 * engine (fan-out, delivery, retries, breaker, auto-disable) driven against a real HTTP receiver
 * with a manual clock, `drain()` and `clock.advance()`. Every test gets a fresh storage.
 * @example
 * // test/engine-scenarios.test.ts of a storage package
 * import { runEngineScenarios } from "@postel/core/testing";
 * import { SqliteStorage } from "../src/index.js";
 *
 * runEngineScenarios({ name: "sqlite", create: () => SqliteStorage({ url: `file:${tempFile()}` }) });
 */
export function runEngineScenarios<S extends Storage<never>>(options: EngineScenarioOptions<S>): void {
  const skip = options.skip ?? {};
  const unknown = Object.keys(skip).filter(
    (key) => !(ENGINE_SCENARIO_GROUPS as readonly string[]).includes(key),
  );
  if (unknown.length > 0) {
    const known = `use one of: ${ENGINE_SCENARIO_GROUPS.join(", ")}`;
    const issues = unknown.map((key) => ({ path: `skip.${key}`, message: `unknown group; ${known}` }));
    throw new ConfigurationError(issues, "runEngineScenarios options");
  }

  let current: Running<S> | undefined;
  const context: ScenarioContext = {
    async start(outbound = {}): Promise<Scenario> {
      const run = current;
      if (!run) throw new Error("runEngineScenarios: no storage; `create()` did not run for this test");
      run.receiver ??= startScenarioReceiver();
      const receiver = await run.receiver;
      // The suite only hands the storage to Postel, which accepts any storage.
      const storage = run.storage as unknown as Storage<unknown>;
      const postel = Postel({
        clock: run.clock,
        random: seededRandom(7),
        outbound: {
          storage,
          ...outbound,
          http: { allowPrivateNetworks: true, timeout: "2s", ...outbound.http },
        } as OutboundOptions,
      });
      run.postels.push(postel);
      return { postel, clock: run.clock, receiver, storage };
    },
    skip,
  };

  describe(`engine scenarios: ${options.name}`, () => {
    beforeEach(async () => {
      current = { storage: await options.create(), clock: new ManualClock(), receiver: null, postels: [] };
    });
    afterEach(async () => {
      const run = current;
      current = undefined;
      if (!run) return;
      try {
        for (const postel of run.postels) await postel.stop();
        await (await run.receiver)?.close();
        await options.destroy?.(run.storage);
      } finally {
        for (const postel of run.postels) await postel.close();
        if (run.postels.length === 0) await run.storage.close();
      }
    });

    autoDisableScenarios(context);
    isolationScenarios(context);
    orderingScenarios(context);
  });
}
