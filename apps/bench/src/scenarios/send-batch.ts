import { type Outbound as PostelOutbound, Postel, type SendEvent, type Storage } from "@postel/core";
import { PostgresStorage } from "@postel/storage-postgres";
import { SqliteStorage } from "@postel/storage-sqlite";
import postgres from "postgres";
import { createBenchDatabase, PAYLOAD } from "../database.js";
import type { Scenario, ScenarioContext } from "../scenario.js";
import { createBenchFile } from "../sqlite-file.js";
import { type Metric, median } from "../stats.js";

const DATA = JSON.parse(PAYLOAD) as unknown;
const BATCH = 1_000;
const TARGET = { op: ">=", value: 50_000 } as const;

type Outbound = PostelOutbound<Storage<unknown>>;

/** Events/s of one caller awaiting `sendBatch` of `BATCH` events at a time, `total` events in all. */
async function batchRate(outbound: Outbound, total: number): Promise<number> {
  let sent = 0;
  const started = performance.now();
  while (sent < total) {
    const events: SendEvent[] = Array.from({ length: Math.min(BATCH, total - sent) }, () => ({
      type: "order.created",
      data: DATA,
    }));
    sent += (await outbound.sendBatch(events)).length;
  }
  return (sent / (performance.now() - started)) * 1000;
}

/** Events/s of one caller awaiting `send()` for each event in turn: the baseline. */
async function loopRate(outbound: Outbound, total: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < total; i++) await outbound.send({ type: "order.created", data: DATA });
  return (total / (performance.now() - started)) * 1000;
}

/**
 * Runs the batch and the loop alternately, `scale.runs` times, each on a storage from `open` (with a
 * warm-up of one batch and 100 sends first), and returns the one row: sendBatch's median, the loop's
 * as baseline.
 */
async function measure(
  scenario: string,
  { scale, log }: ScenarioContext,
  open: () => Promise<{ outbound: Outbound; close(): Promise<void> }>,
): Promise<Metric[]> {
  const batch: number[] = [];
  const loop: number[] = [];
  for (let run = 1; run <= scale.runs; run++) {
    const { outbound, close } = await open();
    try {
      await batchRate(outbound, BATCH);
      await loopRate(outbound, 100);
      batch.push(await batchRate(outbound, scale.batchEvents));
      loop.push(await loopRate(outbound, scale.sequentialSends));
    } finally {
      await close();
    }
    const rate = (value: number | undefined) => Math.round(value ?? 0).toLocaleString("en-US");
    log(
      `  run ${run}/${scale.runs}: sendBatch ${rate(batch.at(-1))} events/s ` +
        `(${scale.batchEvents.toLocaleString("en-US")} in batches of ${BATCH.toLocaleString("en-US")}); ` +
        `send() loop ${rate(loop.at(-1))} events/s (${scale.sequentialSends.toLocaleString("en-US")} calls)`,
    );
  }
  return [
    {
      scenario,
      name: `sendBatch, batches of ${BATCH.toLocaleString("en-US")}, one caller`,
      unit: "events/s",
      postel: median(batch),
      postelRuns: batch,
      naive: median(loop),
      naiveRuns: loop,
      target: TARGET,
      note: "baseline: the same caller awaiting send() once per event (issue 15: ≥ 50,000 events/s through sendBatch)",
    },
  ];
}

/** `sendBatch` throughput on PostgreSQL (no worker running), with a `send()` loop as baseline. */
export const sendBatch: Scenario = {
  name: "send-batch",
  storage: "postgres",
  description:
    "sendBatch() throughput, batches of 1,000 events, one caller, vs a send() loop (≥ 50,000 events/s)",
  async run(context) {
    const database = await createBenchDatabase();
    try {
      return await measure("send-batch", context, async () => {
        const pool = postgres(database.url, { max: 4, onnotice: () => {} });
        const postel = Postel({ outbound: { storage: PostgresStorage({ sql: pool }, { migrate: false }) } });
        return { outbound: postel.outbound, close: () => pool.end({ timeout: 5 }) };
      });
    } finally {
      await database.drop();
    }
  },
};

/** `sendBatch` throughput on a SQLite file (`synchronous=full`, the default), with a `send()` loop as baseline. */
export const sqliteSendBatch: Scenario = {
  name: "sqlite-send-batch",
  storage: "sqlite",
  description:
    "sendBatch() throughput on a SQLite file (synchronous=full), batches of 1,000, vs a send() loop (≥ 50,000 events/s)",
  async run(context) {
    return measure("sqlite-send-batch", context, async () => {
      const file = await createBenchFile({ migrate: true });
      const postel = Postel({ outbound: { storage: SqliteStorage({ url: file.url }) } });
      return {
        outbound: postel.outbound,
        close: async () => {
          await postel.close();
          await file.remove();
        },
      };
    });
  },
};
