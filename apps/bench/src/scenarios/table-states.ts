import { databaseCostRows, figures } from "../database-cost.js";
import { type DrainMeasurement, drainStateWithPostel, startReceiver } from "../drain-run.js";
import type { Scenario } from "../scenario.js";
import type { Metric } from "../stats.js";
import { describeState, TABLE_STATES, type TableState } from "../table-state.js";

/**
 * Issue 25's drain on its three table states: `send()` from 32 callers, then a drain to one endpoint
 * with Postel's defaults, after VACUUM ANALYZE, never analysed, and beside a long finished history.
 * Run it with `--baseline <ref>` to compare a change with the code before it on each state: a change
 * once halved the rate and doubled PostgreSQL's CPU per delivery on one state while it helped another.
 */
export const tableStates: Scenario = {
  name: "table-states",
  storage: "postgres",
  description:
    "drain of messages sent with send() on three table states: after VACUUM ANALYZE, never analysed, beside a finished history (rate, PostgreSQL CPU and WAL per delivery)",
  async run({ scale, log }) {
    const { receiver, base } = await startReceiver();
    try {
      const drains = new Map<TableState, DrainMeasurement[]>(TABLE_STATES.map((state) => [state, []]));
      for (let run = 1; run <= scale.runs; run++) {
        for (const state of TABLE_STATES) {
          drains.get(state)!.push(
            await drainStateWithPostel(base, {
              state,
              messages: scale.stateMessages,
              history: scale.stateHistory,
              log,
              receiver,
              label: `${describeState(state, scale.stateHistory)}, run ${run}/${scale.runs}`,
            }),
          );
        }
      }
      return TABLE_STATES.flatMap((state) => {
        const postel = drains.get(state)!;
        const label = describeState(state, scale.stateHistory);
        return [
          {
            scenario: "table-states",
            name: `${label}: ${scale.stateMessages.toLocaleString("en-US")} deliveries`,
            unit: "deliveries/s",
            ...figures({ postel }, (m) => m.perSecond),
          },
          ...databaseCostRows("table-states", `${label}: `, { postel }),
        ] satisfies Metric[];
      });
    } finally {
      await receiver.kill();
    }
  },
};
