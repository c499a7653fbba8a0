import { databaseCostRows } from "../database-cost.js";
import { createBenchDatabase, seedHistory } from "../database.js";
import { createEndpoints, type DrainMeasurement, drainWithPostel, startReceiver } from "../drain-run.js";
import type { Scenario } from "../scenario.js";
import { median } from "../stats.js";

/**
 * Throughput with a million finished deliveries of history (messages, deliveries and attempts) in
 * the tables, against the same drain on empty tables: partial indexes keep claiming flat.
 */
export const history: Scenario = {
  name: "history",
  storage: "postgres",
  description: "drain throughput with 1,000,000 finished deliveries of history vs empty tables (within 10%)",
  async run({ scale, log }) {
    const { receiver, base } = await startReceiver();
    const rows = scale.historyRows.toLocaleString("en-US");
    const withHistory = await createBenchDatabase();
    try {
      await createEndpoints(withHistory, base, 1);
      const [endpoint] = await withHistory.sql<{ id: string }[]>`SELECT id FROM postel.endpoints`;
      const started = Date.now();
      await seedHistory(withHistory.sql, scale.historyRows, {
        endpointIds: [endpoint!.id],
        prefix: "msg_hist",
      });
      log(
        `  seeded ${rows} finished deliveries (with their messages and attempts) in ${Math.round((Date.now() - started) / 1000)} s`,
      );
      const empty: DrainMeasurement[] = [];
      const full: DrainMeasurement[] = [];
      const messages = scale.drainMessages;
      for (let run = 1; run <= scale.runs; run++) {
        empty.push(
          await drainWithPostel(base, {
            messages,
            endpoints: 1,
            log,
            receiver,
            label: `empty run ${run}/${scale.runs}`,
          }),
        );
        full.push(
          await drainWithPostel(base, {
            messages,
            endpoints: 1,
            log,
            receiver,
            database: withHistory,
            prefix: `msg_run${run}_`,
            label: `history run ${run}/${scale.runs}`,
          }),
        );
      }
      const emptyRuns = empty.map((m) => m.perSecond);
      const fullRuns = full.map((m) => m.perSecond);
      const ratioRuns = fullRuns.map((value, i) => value / emptyRuns[i]!);
      return [
        {
          scenario: "history",
          name: `drain on empty tables`,
          unit: "deliveries/s",
          postel: median(emptyRuns),
          postelRuns: emptyRuns,
        },
        {
          scenario: "history",
          name: `drain beside ${rows} finished deliveries`,
          unit: "deliveries/s",
          postel: median(fullRuns),
          postelRuns: fullRuns,
        },
        {
          scenario: "history",
          name: "with history ÷ empty",
          unit: "ratio",
          postel: median(ratioRuns),
          postelRuns: ratioRuns,
          target: { op: ">=", value: 0.9 },
          note:
            "runs alternate empty / history, so machine noise hits both alike; the WAL and CPU rows' " +
            "baseline is the drain on empty tables",
        },
        ...databaseCostRows("history", `beside ${rows}: `, {
          postel: full,
          naive: empty,
        }),
      ];
    } finally {
      await withHistory.drop();
      await receiver.kill();
    }
  },
};
