import { createSigner } from "@postel/signing";
import postgres from "postgres";
import {
  childConfig,
  cpuMs,
  peakRss,
  preciseNow,
  report,
  type WorkerCommand,
  type WorkerConfig,
  type WorkerReport,
} from "./protocol.js";

// The baseline: the outbox loop people write by hand. Each loop claims one row with
// `FOR UPDATE SKIP LOCKED LIMIT 1`, signs it with @postel/signing, POSTs it with fetch and marks it
// delivered, all inside one transaction; `concurrency` loops run side by side.
const config = childConfig<WorkerConfig>();
const sql = postgres(config.url, { max: config.concurrency, onnotice: () => {} });
const signers = new Map<string, ReturnType<typeof createSigner>>();

interface OutboxRow {
  id: string;
  url: string;
  secret: string;
  webhook_id: string;
  payload: string;
}

let delivered = 0;
let running = false;

async function deliverOne(): Promise<boolean> {
  return sql.begin(async (tx) => {
    const [row] = await tx<OutboxRow[]>`
      SELECT id, url, secret, webhook_id, payload FROM naive.outbox
      WHERE status = 'pending' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`;
    if (!row) return false;
    let signer = signers.get(row.secret);
    if (!signer) {
      signer = createSigner(row.secret);
      signers.set(row.secret, signer);
    }
    const headers = signer.sign(row.webhook_id, Math.floor(Date.now() / 1000), row.payload);
    const response = await fetch(row.url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: row.payload,
    });
    await response.arrayBuffer();
    await tx`
      UPDATE naive.outbox SET status = ${response.ok ? "delivered" : "failed"}, attempts = attempts + 1
      WHERE id = ${row.id}`;
    return true;
  });
}

async function loop(): Promise<void> {
  while (running) {
    if (await deliverOne()) {
      delivered += 1;
      checkDone();
    } else await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let startedAt = 0;
let cpuAtStart = 0;
let loops: Promise<void>[] = [];
let finished = false;
const watch = setInterval(() => {
  report<WorkerReport>({ type: "progress", delivered });
}, 1_000);
watch.unref();
function checkDone(): void {
  if (finished || config.target === 0 || delivered < config.target) return;
  finished = true;
  const elapsedMs = preciseNow() - startedAt;
  void peakRss().then((peakRssBytes) =>
    report<WorkerReport>({ type: "done", delivered, elapsedMs, peakRssBytes, cpuMs: cpuMs() - cpuAtStart }),
  );
}

process.on("message", async (command: WorkerCommand) => {
  if (command.type === "go") {
    startedAt = preciseNow();
    cpuAtStart = cpuMs();
    running = true;
    loops = Array.from({ length: config.concurrency }, () => loop());
  } else {
    running = false;
    await Promise.all(loops);
    await sql.end({ timeout: 5 });
    report<WorkerReport>({ type: "stopped", delivered, peakRssBytes: await peakRss() });
    process.disconnect();
  }
});

await sql`SELECT 1`;
report<WorkerReport>({ type: "ready" });
