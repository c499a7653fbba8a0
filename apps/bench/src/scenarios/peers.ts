import { createRequire } from "node:module";
import { databaseCostRows, figures } from "../database-cost.js";
import { type DrainMeasurement, drainPeer, drainWithPostel, startReceiver } from "../drain-run.js";
import type { Scenario } from "../scenario.js";
import { formatNumber, type Metric, median } from "../stats.js";

/**
 * Requests in flight the peers may have: where Postel's default (`"auto"`) budget starts. Their other
 * settings are in `src/peer-graphile-worker.ts` and `src/peer-pg-boss.ts`.
 */
const PEER_CONCURRENCY = 256;

/** The installed version of a peer queue, for the note and the results JSON. */
function versionOf(name: string): string {
  return (createRequire(import.meta.url)(`${name}/package.json`) as { version: string }).version;
}

/** The receiver's median CPU per 1,000 deliveries over a party's runs (for the note). */
function receiverCpu(runs: DrainMeasurement[]): string {
  return formatNumber(median(runs.map((m) => m.cpuPer1k.receiver)));
}

/**
 * Issue 15's comparison: Postel (default configuration), graphile-worker and pg-boss each drain the
 * same number of pre-enqueued webhooks to one endpoint, on a fresh database each, runs alternating.
 */
export const peers: Scenario = {
  name: "peers",
  storage: "postgres",
  description:
    "Postel beside graphile-worker and pg-boss draining pre-enqueued webhooks to one endpoint (rate, CPU and WAL per delivery)",
  async run({ scale, log }) {
    const { receiver, base } = await startReceiver();
    try {
      const messages = scale.peerMessages;
      const drains: Record<"postel" | "graphileWorker" | "pgBoss", DrainMeasurement[]> = {
        postel: [],
        graphileWorker: [],
        pgBoss: [],
      };
      for (let run = 1; run <= scale.runs; run++) {
        const common = { messages, endpoints: 1, log, receiver };
        const of = `run ${run}/${scale.runs}`;
        drains.postel.push(await drainWithPostel(base, { ...common, label: `Postel ${of}` }));
        drains.graphileWorker.push(
          await drainPeer("peer-graphile-worker", base, {
            ...common,
            concurrency: PEER_CONCURRENCY,
            label: `graphile-worker ${of}`,
          }),
        );
        drains.pgBoss.push(
          await drainPeer("peer-pg-boss", base, {
            ...common,
            concurrency: PEER_CONCURRENCY,
            label: `pg-boss ${of}`,
          }),
        );
      }
      const [wal, databaseCpu] = databaseCostRows("peers", "", drains);
      return [
        {
          scenario: "peers",
          name: `${messages.toLocaleString("en-US")} deliveries, 1 endpoint`,
          unit: "deliveries/s",
          ...figures(drains, (m) => m.perSecond),
          note:
            `Postel with its defaults; graphile-worker ${versionOf("graphile-worker")} and pg-boss ` +
            `${versionOf("pg-boss")} with a hand-written task (sign with @postel/signing, POST with undici), ` +
            `up to ${PEER_CONCURRENCY} requests in flight; runs alternate Postel, graphile-worker, pg-boss; ` +
            `the receiver's CPU ms per 1,000 deliveries, median: Postel ${receiverCpu(drains.postel)}, ` +
            `graphile-worker ${receiverCpu(drains.graphileWorker)}, pg-boss ${receiverCpu(drains.pgBoss)}`,
        },
        {
          scenario: "peers",
          name: "worker CPU per 1,000 deliveries",
          unit: "ms",
          ...figures(drains, (m) => m.cpuPer1k.worker),
        },
        databaseCpu!,
        wal!,
      ] satisfies Metric[];
    } finally {
      await receiver.kill();
    }
  },
};
