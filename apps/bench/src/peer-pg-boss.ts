import PgBoss from "pg-boss";
import { webhookJobs, type WebhookJob, waitUntil, webhookPoster } from "./peer-webhook.js";
import { childConfig, type PeerWorkerConfig, report, type WorkerReport } from "./protocol.js";
import { serveWorker } from "./worker-process.js";

// Peer baseline: pg-boss draining pre-enqueued webhook jobs with the hand-written task of
// peer-webhook.ts. pg-boss 10 has no team size: each `work()` call is one loop that fetches up to
// `batchSize` jobs, hands them to the handler together, completes them all in one statement (without
// waiting for it) and, when that took less than the polling interval, sleeps out the rest of it. So a
// loop delivers at most BATCH jobs per interval: at the shortest interval pg-boss allows (0.5 s),
// 4 loops of 1,000 cap the rate at 8,000/s, above what this machine reached (2 loops of 500 ran at
// their cap, 2,000/s); 8 loops cost PostgreSQL more CPU per delivery and were no faster. The handler
// POSTs its batch at once, at most `concurrency` requests in flight in all. Everything else is the
// default (maintenance, monitoring, retries). A job counts when its POST returns; `done` waits until
// pg-boss has marked every job completed.
const config = childConfig<PeerWorkerConfig>();
const QUEUE = "webhooks";
const WORKERS = 4;
const BATCH = 1_000;

const boss = new PgBoss({ connectionString: config.url });
boss.on("error", (error) => console.error("[pg-boss]", error));

// Before `ready`: install the schema (start() migrates), create the queue and enqueue every job
// with the bulk API (one `insert`).
await boss.start();
await boss.createQueue(QUEUE);
await boss.insert(webhookJobs(config.target, config.body).map((data) => ({ name: QUEUE, data })));
// As the other drains' seeds do: the tables start vacuumed and analysed.
await boss.getDb().executeSql("VACUUM ANALYZE pgboss.job", []);

const poster = webhookPoster(config.endpoint, config.concurrency);
const counted = serveWorker({
  target: config.target,
  async start() {
    for (let i = 0; i < WORKERS; i++) {
      await boss.work<WebhookJob>(QUEUE, { batchSize: BATCH, pollingIntervalSeconds: 0.5 }, (jobs) =>
        Promise.all(
          jobs.map(async (job) => {
            await poster.post(job.data);
            counted(1);
          }),
        ),
      );
    }
  },
  recorded: () => waitUntil(async () => (await boss.getQueueSize(QUEUE, { before: "completed" })) === 0),
  async stop() {
    await boss.stop({ graceful: true, wait: true });
    await poster.close();
  },
});

report<WorkerReport>({ type: "ready" });
