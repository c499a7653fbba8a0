import { Logger, makeWorkerUtils, type Runner, run } from "graphile-worker";
import { webhookJobs, type WebhookJob, waitUntil, webhookPoster } from "./peer-webhook.js";
import { childConfig, type PeerWorkerConfig, report, type WorkerReport } from "./protocol.js";
import { serveWorker } from "./worker-process.js";

// Peer baseline: graphile-worker draining pre-enqueued webhook jobs with the hand-written task of
// peer-webhook.ts. Settings are the ones graphile-worker's performance page runs its own benchmark
// with (a local queue of 500 jobs, completions and failures batched with a 0 ms delay, a pool of 25
// connections), but `concurrency` jobs at a time instead of 24: its jobs take microseconds, these wait
// on a POST, and 24 ran at half the rate of 256. Everything else is the default. A job counts when its
// task returns; `done` waits until graphile-worker has deleted every completed job.
const config = childConfig<PeerWorkerConfig>();
const TASK = "webhook";

// Warnings and errors only: graphile-worker's default logger prints a line for every job.
const logger = new Logger(() => (level, message) => {
  if (level === "error" || level === "warning") console.error(`[graphile-worker] ${level}: ${message}`);
});
const preset = {
  worker: {
    connectionString: config.url,
    concurrentJobs: config.concurrency,
    maxPoolSize: 25,
    localQueue: { size: 500 },
    completeJobBatchDelay: 0,
    failJobBatchDelay: 0,
  },
};

// Before `ready`: install the schema and enqueue every job with the bulk API (one `add_jobs` call).
const utils = await makeWorkerUtils({ preset, logger });
await utils.migrate();
await utils.addJobs(
  webhookJobs(config.target, config.body).map((payload) => ({ identifier: TASK, payload })),
);
// As the other drains' seeds do: the tables start vacuumed and analysed.
await utils.withPgClient((client) => client.query("VACUUM ANALYZE graphile_worker._private_jobs"));

const poster = webhookPoster(config.endpoint, config.concurrency);
let runner: Runner | undefined;
const counted = serveWorker({
  target: config.target,
  async start() {
    runner = await run({
      preset,
      logger,
      noHandleSignals: true,
      taskList: {
        [TASK]: async (payload) => {
          await poster.post(payload as WebhookJob);
          counted(1);
        },
      },
    });
  },
  // Completed jobs are deleted, in batches after their tasks return.
  recorded: () =>
    waitUntil(async () => {
      const { rows } = await utils.withPgClient((client) =>
        client.query<{ empty: boolean }>(
          "SELECT NOT EXISTS (SELECT 1 FROM graphile_worker._private_jobs) AS empty",
        ),
      );
      return rows[0]?.empty === true;
    }),
  async stop() {
    await runner?.stop();
    await utils.release();
    await poster.close();
  },
});

report<WorkerReport>({ type: "ready" });
