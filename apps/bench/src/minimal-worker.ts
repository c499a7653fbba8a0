import { createSigner } from "@postel/signing";
import postgres from "postgres";
import { Agent } from "undici";
import type { NaiveOutboxRow } from "./database.js";
import { childConfig, report, type WorkerConfig, type WorkerReport } from "./protocol.js";
import { serveWorker } from "./worker-process.js";

// The ceiling: the least an outbox worker can do. It claims batches of up to 64 rows in one
// statement, signs each (Standard Webhooks), POSTs it with undici's request API, and marks the
// finished rows delivered in batches, one UPDATE at a time. Up to `concurrency` requests in flight.
// No retries, leases that expire, audit trail, endpoints, events or error handling: a reference for
// how fast this machine can claim, sign, POST and complete, not something to run in production.
const config = childConfig<WorkerConfig>();
const BATCH = 64;
const sql = postgres(config.url, { max: 4, onnotice: () => {} });
const agent = new Agent({ connections: config.concurrency });
const signers = new Map<string, ReturnType<typeof createSigner>>();
const targets = new Map<string, { origin: string; path: string }>();

let running = false;
let inFlight = 0;
let done: string[] = [];
let completing = false;
let slotFreed: (() => void) | null = null;

async function claim(limit: number): Promise<NaiveOutboxRow[]> {
  return sql<NaiveOutboxRow[]>`
    UPDATE naive.outbox SET status = 'leased'
    WHERE id IN (
      SELECT id FROM naive.outbox WHERE status = 'pending' ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
    RETURNING id, url, secret, webhook_id, payload`;
}

async function post(row: NaiveOutboxRow): Promise<void> {
  let signer = signers.get(row.secret);
  if (!signer) {
    signer = createSigner(row.secret);
    signers.set(row.secret, signer);
  }
  let target = targets.get(row.url);
  if (!target) {
    const url = new URL(row.url);
    target = { origin: url.origin, path: url.pathname };
    targets.set(row.url, target);
  }
  const headers = signer.sign(row.webhook_id, Math.floor(Date.now() / 1000), row.payload);
  const response = await agent.request({
    ...target,
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: row.payload,
  });
  await response.body.dump();
}

function complete(): void {
  if (completing || done.length === 0) return;
  completing = true;
  const ids = done;
  done = [];
  void sql`
    UPDATE naive.outbox SET status = 'delivered', attempts = attempts + 1
    WHERE id = ANY(${ids}::bigint[])`
    .then(() => {
      counted(ids.length);
    })
    .finally(() => {
      completing = false;
      complete();
    });
}

async function loop(): Promise<void> {
  while (running) {
    const free = config.concurrency - inFlight;
    if (free < BATCH / 2) {
      await new Promise<void>((resolve) => {
        slotFreed = resolve;
      });
      continue;
    }
    const rows = await claim(Math.min(BATCH, free));
    if (rows.length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      continue;
    }
    for (const row of rows) {
      inFlight++;
      void post(row).then(() => {
        inFlight--;
        done.push(row.id);
        complete();
        const wake = slotFreed;
        slotFreed = null;
        wake?.();
      });
    }
  }
}

let looping: Promise<void> = Promise.resolve();
const counted = serveWorker({
  target: config.target,
  start() {
    running = true;
    looping = loop();
  },
  async stop() {
    running = false;
    slotFreed?.();
    await looping;
    await agent.close();
    await sql.end({ timeout: 5 });
  },
});

await sql`SELECT 1`;
report<WorkerReport>({ type: "ready" });
