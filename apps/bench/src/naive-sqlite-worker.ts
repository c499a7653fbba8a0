import { type Client, createClient, type Row } from "@libsql/client";
import { createSigner } from "@postel/signing";
import { childConfig, report, type WorkerConfig, type WorkerReport } from "./protocol.js";
import { serveLoops } from "./worker-process.js";
import { synchronousPragma } from "./sqlite-file.js";

// The baseline on SQLite: the outbox loop people write by hand. Each loop claims one row
// (`BEGIN IMMEDIATE; SELECT … LIMIT 1; UPDATE … SET status = 'taken'; COMMIT`), signs it with
// @postel/signing, POSTs it with fetch (keep-alive) and marks it done in its own write; `concurrency`
// loops run side by side on one connection.
//
// libsql waits for a locked database synchronously, blocking the event loop, so two connections of
// one process must never wait for each other: the loops' writes take turns through `exclusive`, as
// any working single-process SQLite outbox has to. The POSTs still overlap.
const config = childConfig<WorkerConfig>();
const client: Client = createClient({ url: config.url, timeout: 5_000, concurrency: 1 });
const signers = new Map<string, ReturnType<typeof createSigner>>();

let turn: Promise<unknown> = Promise.resolve();
/** Runs `write` after every write queued before it. */
function exclusive<T>(write: () => Promise<T>): Promise<T> {
  const result = turn.then(write);
  turn = result.catch(() => undefined);
  return result;
}

async function claimOne(): Promise<Row | undefined> {
  return exclusive(async () => {
    const tx = await client.transaction("write"); // BEGIN IMMEDIATE
    try {
      const { rows } = await tx.execute(
        "SELECT id, url, secret, webhook_id, payload FROM naive_outbox WHERE status = 'pending' ORDER BY id LIMIT 1",
      );
      const row = rows[0];
      if (row)
        await tx.execute({
          sql: "UPDATE naive_outbox SET status = 'taken' WHERE id = ?",
          args: [row["id"]!],
        });
      await tx.commit();
      return row;
    } finally {
      tx.close(); // rolls back unless committed
    }
  });
}

async function deliverOne(): Promise<boolean> {
  const row = await claimOne();
  if (!row) return false;
  const secret = String(row["secret"]);
  const payload = String(row["payload"]);
  let signer = signers.get(secret);
  if (!signer) {
    signer = createSigner(secret);
    signers.set(secret, signer);
  }
  const headers = signer.sign(String(row["webhook_id"]), Math.floor(Date.now() / 1000), payload);
  const response = await fetch(String(row["url"]), {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: payload,
  });
  await response.arrayBuffer();
  await exclusive(() =>
    client.execute({
      sql: "UPDATE naive_outbox SET status = ?, attempts = attempts + 1 WHERE id = ?",
      args: [response.ok ? "delivered" : "failed", row["id"]!],
    }),
  );
  return true;
}

serveLoops(config, deliverOne, () => client.close());

// `synchronous` belongs to the connection: the same setting as the Postel run it is compared with.
await client.execute(synchronousPragma(config.synchronous ?? "full"));
await client.execute("SELECT count(*) FROM naive_outbox");
report<WorkerReport>({ type: "ready" });
