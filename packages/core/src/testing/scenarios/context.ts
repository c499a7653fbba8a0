import { describe, test } from "vitest";
import type { ManualClock } from "../../clock.js";
import type { OutboundOptions } from "../../config/options.js";
import type { PostelInstance } from "../../postel.js";
import type { Storage } from "../../storage/storage.js";
import type { ScenarioReceiver } from "./receiver.js";

/** The groups of the engine scenario suite; each can be skipped with a stated reason. */
export const ENGINE_SCENARIO_GROUPS = ["auto-disable", "isolation", "limits", "ordering"] as const;

/** Name of one group of the engine scenario suite. */
export type EngineScenarioGroup = (typeof ENGINE_SCENARIO_GROUPS)[number];

/** One running scenario: a Postel on the test's fresh storage, its manual clock and a live receiver. */
export interface Scenario {
  postel: PostelInstance<Storage<unknown>>;
  clock: ManualClock;
  receiver: ScenarioReceiver;
  storage: Storage<unknown>;
}

/** What every group needs. */
export interface ScenarioContext {
  /**
   * Builds a Postel on the running test's storage with a `ManualClock`, `seededRandom(7)`, private
   * networks allowed and a 2 s HTTP timeout; `outbound` adds to (or overrides) those options. Calls
   * in one test share the storage, the clock and the receiver. Everything is closed after the test.
   */
  start(outbound?: Partial<OutboundOptions>): Promise<Scenario>;
  skip: Partial<Record<EngineScenarioGroup, string>>;
}

/** Registers one test of a group (skipped, with the reason in its title, when the group is skipped). */
export type ScenarioTest = (title: string, fn: () => Promise<void>, timeoutMs?: number) => void;

/** Register a `describe` block for `name`; its tests are skipped, with the reason in their titles, when the wiring skips the group. */
export function group(
  context: ScenarioContext,
  name: EngineScenarioGroup,
  body: (test: ScenarioTest) => void,
): void {
  const reason = context.skip[name];
  describe(name, () => {
    body(
      reason === undefined
        ? (title, fn, timeoutMs) => test(title, fn, timeoutMs)
        : (title, fn) => test.skip(`${title} (skipped: ${reason})`, fn),
    );
  });
}
