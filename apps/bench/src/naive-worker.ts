import { createSigner } from "@postel/signing";
import postgres from "postgres";
import type { NaiveOutboxRow } from "./database.js";
import { childConfig, report, type WorkerConfig, type WorkerReport } from "./protocol.js";
import { serveLoops } from "./worker-process.js";

// The baseline: the outbox loop people write by hand. Each loop claims one row with
// `FOR UPDATE SKIP LOCKED LIMIT 1`, signs it with @postel/signing, POSTs it with fetch and marks it
// delivered, all inside one transaction; `concurrency` loops run side by side.
const config = childConfig<WorkerConfig>();
const sql = postgres(config.url, { max: config.concurrency, onnotice: () => {} });
const signers = new Map<string, ReturnType<typeof createSigner>>();

async function deliverOne(): Promise<boolean> {
  return sql.begin(async (tx) => {
    const [row] = await tx<NaiveOutboxRow[]>`
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

serveLoops(config, deliverOne, () => sql.end({ timeout: 5 }));

await sql`SELECT 1`;
report<WorkerReport>({ type: "ready" });
