import type { StorageKind } from "./protocol.js";
import type { Metric } from "./stats.js";

/** How big the runs are: `full` hits the figures, `quick` is a smoke run. */
export interface Scale {
  quick: boolean;
  /** Runs per measurement; the table shows the median. */
  runs: number;
  /** Messages in the one-endpoint drain (issue: 50,000). */
  drainMessages: number;
  /** Messages of the 10-endpoint fan-out drain (× 10 deliveries). */
  fanoutMessages: number;
  /** Messages of the naive baseline's drain (its rate is flat in N, and it is slow). */
  naiveMessages: number;
  /** Sequential `send()` calls of the one-caller latency run. */
  sequentialSends: number;
  /** Concurrent `send()` calls through a 20-connection pool (issue: 10,000). */
  concurrentSends: number;
  /** `send()` calls per side (none, A/A control, catalog) per run and variant of `send-catalog` (issue 26). */
  catalogSends: number;
  /** Calls per run of `send-catalog`'s in-process validation microbenchmark. */
  catalogParses: number;
  /** Events sent through `sendBatch` in batches of 1,000 per timed run (issue 15). */
  batchEvents: number;
  /** Messages sent one at a time in the cross-process wake-up run. */
  wakeups: number;
  /** Finished deliveries of history (issue: 1,000,000). */
  historyRows: number;
  /** Messages drained while the worker's peak RSS is watched (issue: 100,000). */
  memoryMessages: number;
  /** Messages in the one-endpoint drain on a SQLite file (issue 5: 20,000). */
  sqliteDrainMessages: number;
  /** Messages of the naive baseline's drain on a SQLite file. */
  sqliteNaiveMessages: number;
  /** Messages fanned out to 10 endpoints, one of them slow, hung or failing (issue 13: 2,000). */
  noisyMessages: number;
  /** How long one noisy-neighbour run may take before it is cut off, in ms. */
  noisyCapMs: number;
  /** Messages pre-enqueued for the busy endpoint while the quiet one is timed (issue 13: 50,000). */
  quietBacklog: number;
  /** Messages to 100 endpoints that answer in 100 ms (issue 13: 20,000). */
  latencyMessages: number;
  /** Webhooks pre-enqueued to one endpoint for Postel and each peer queue (issue 15: 20,000). */
  peerMessages: number;
  /** Messages sent with `send()` before each drain of `table-states` (issue 25: 20,000). */
  stateMessages: number;
  /** Finished messages beside them in the `history` table state (issue 25: 1,000,000). */
  stateHistory: number;
  /** Pending deliveries of the outage `backlog` seeds (issue 28: 1,000,000). */
  backlogDeliveries: number;
}

/** The sizes of a full run and of `--quick`. */
export function scaleFor(quick: boolean, runs?: number): Scale {
  return quick
    ? {
        quick,
        runs: runs ?? 1,
        drainMessages: 5_000,
        fanoutMessages: 500,
        naiveMessages: 1_000,
        sequentialSends: 300,
        concurrentSends: 2_000,
        catalogSends: 500,
        catalogParses: 100_000,
        batchEvents: 10_000,
        wakeups: 50,
        historyRows: 50_000,
        memoryMessages: 10_000,
        sqliteDrainMessages: 5_000,
        sqliteNaiveMessages: 500,
        noisyMessages: 200,
        noisyCapMs: 30_000,
        quietBacklog: 5_000,
        latencyMessages: 2_000,
        peerMessages: 2_000,
        stateMessages: 4_000,
        stateHistory: 50_000,
        backlogDeliveries: 50_000,
      }
    : {
        quick,
        runs: runs ?? 3,
        drainMessages: 50_000,
        fanoutMessages: 5_000,
        naiveMessages: 10_000,
        sequentialSends: 2_000,
        concurrentSends: 10_000,
        catalogSends: 5_000,
        catalogParses: 200_000,
        batchEvents: 100_000,
        wakeups: 300,
        historyRows: 1_000_000,
        memoryMessages: 100_000,
        sqliteDrainMessages: 20_000,
        sqliteNaiveMessages: 5_000,
        noisyMessages: 2_000,
        noisyCapMs: 120_000,
        quietBacklog: 50_000,
        latencyMessages: 20_000,
        peerMessages: 20_000,
        stateMessages: 20_000,
        stateHistory: 1_000_000,
        backlogDeliveries: 1_000_000,
      };
}

/** What a scenario gets. */
export interface ScenarioContext {
  scale: Scale;
  /** Progress lines (stderr), so stdout keeps only the table. */
  log: (line: string) => void;
}

/** One named scenario of the bench. */
export interface Scenario {
  name: string;
  /**
   * The database it needs: a PostgreSQL server, only a SQLite file, or none (an in-process
   * measurement); `--storage` selects by this.
   */
  storage: StorageKind | "none";
  description: string;
  run(context: ScenarioContext): Promise<Metric[]>;
}
