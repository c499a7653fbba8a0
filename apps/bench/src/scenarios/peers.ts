import { createRequire } from "node:module";
import { databaseCostRows, figures } from "../database-cost.js";
import { type DrainMeasurement, drainPeer, drainStateWithPostel, startReceiver } from "../drain-run.js";
import type { Scenario } from "../scenario.js";
import { formatNumber, type Metric, median, type Target } from "../stats.js";
import { describeState, TABLE_STATES, type TableState } from "../table-state.js";

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

/** Issue 25's targets for Postel beside graphile-worker, on every table state. */
const PEER_TARGETS = {
  /** Postel's rate ÷ graphile-worker's. */
  rate: { op: ">=", value: 1.1 },
  /** Postel's PostgreSQL CPU per delivery ÷ graphile-worker's. */
  cpu: { op: "<=", value: 1.3 },
  /** Postel's WAL bytes per delivery without FPI. */
  wal: { op: "<=", value: 1_100 },
} as const;

/**
 * Issue 15's comparison, on issue 25's harness: Postel (default configuration, its messages sent with
 * `send()` by 32 callers, on each table state of table-state.ts), graphile-worker and pg-boss each
 * drain the same number of webhooks to one endpoint, on a fresh database each, runs alternating. The
 * queues enqueue with their own bulk API; their tables have one state (they keep no history).
 */
export const peers: Scenario = {
  name: "peers",
  storage: "postgres",
  description:
    "Postel on each table state beside graphile-worker and pg-boss draining webhooks to one endpoint (rate, CPU and WAL per delivery; issue 25's targets)",
  async run({ scale, log }) {
    const { receiver, base } = await startReceiver();
    try {
      const messages = scale.stateMessages;
      const postel = new Map<TableState, DrainMeasurement[]>(TABLE_STATES.map((state) => [state, []]));
      const queues: Record<"graphileWorker" | "pgBoss", DrainMeasurement[]> = {
        graphileWorker: [],
        pgBoss: [],
      };
      for (let run = 1; run <= scale.runs; run++) {
        const common = { messages, endpoints: 1, log, receiver };
        const of = `run ${run}/${scale.runs}`;
        for (const state of TABLE_STATES) {
          postel.get(state)!.push(
            await drainStateWithPostel(base, {
              ...common,
              state,
              history: scale.stateHistory,
              label: `Postel ${describeState(state, scale.stateHistory)}, ${of}`,
            }),
          );
        }
        queues.graphileWorker.push(
          await drainPeer("peer-graphile-worker", base, {
            ...common,
            concurrency: PEER_CONCURRENCY,
            label: `graphile-worker ${of}`,
          }),
        );
        queues.pgBoss.push(
          await drainPeer("peer-pg-boss", base, {
            ...common,
            concurrency: PEER_CONCURRENCY,
            label: `pg-boss ${of}`,
          }),
        );
      }
      const note =
        `Postel with its defaults, messages sent with send() by 32 callers; graphile-worker ${versionOf("graphile-worker")} and pg-boss ` +
        `${versionOf("pg-boss")} with a hand-written task (sign with @postel/signing, POST with undici), ` +
        `up to ${PEER_CONCURRENCY} requests in flight; runs alternate Postel (each state), graphile-worker, pg-boss; ` +
        `the receiver's CPU ms per 1,000 deliveries, median: graphile-worker ${receiverCpu(queues.graphileWorker)}, ` +
        `pg-boss ${receiverCpu(queues.pgBoss)}`;
      return TABLE_STATES.flatMap((state, i) => {
        const drains = { postel: postel.get(state)!, ...queues };
        const group = `peers, Postel ${describeState(state, scale.stateHistory)}`;
        const [wal, databaseCpu] = databaseCostRows(group, "", drains);
        const rate = figures(drains, (m) => m.perSecond);
        const cpu = databaseCpu!;
        // Ratios of medians, as the issue states its targets.
        const ratioRow = (
          name: string,
          of: Pick<Metric, "postel" | "graphileWorker">,
          target: Target,
        ): Metric => ({
          scenario: "peers",
          name: `${describeState(state, scale.stateHistory)}: ${name}`,
          unit: "×",
          postel: of.postel / of.graphileWorker!,
          postelRuns: [],
          target,
        });
        return [
          {
            scenario: group,
            name: `${messages.toLocaleString("en-US")} deliveries, 1 endpoint`,
            unit: "deliveries/s",
            ...rate,
            ...(i === 0 ? { note } : {}),
          },
          {
            scenario: group,
            name: "worker CPU per 1,000 deliveries",
            unit: "ms",
            ...figures(drains, (m) => m.cpuPer1k.worker),
          },
          cpu,
          wal!,
          ratioRow("rate ÷ graphile-worker's", rate, PEER_TARGETS.rate),
          ratioRow("PostgreSQL CPU per delivery ÷ graphile-worker's", cpu, PEER_TARGETS.cpu),
          {
            scenario: "peers",
            name: `${describeState(state, scale.stateHistory)}: WAL per delivery without FPI`,
            unit: "bytes",
            postel: wal!.postel,
            postelRuns: wal!.postelRuns,
            target: PEER_TARGETS.wal,
          },
        ] satisfies Metric[];
      });
    } finally {
      await receiver.kill();
    }
  },
};
