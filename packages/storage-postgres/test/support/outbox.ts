import { Postel, type PostelInstance } from "@postel/core";
import type { Sql } from "postgres";
import { migrate, PostgresStorage, type PostgresStorageInstance } from "../../src/index.js";
import { createTestDatabase, type TestDatabase } from "./database.js";

/** A migrated throwaway database with one endpoint, and the test's own Postel to send through. */
export interface Outbox {
  database: TestDatabase;
  sql: Sql;
  postel: PostelInstance<PostgresStorageInstance>;
  /** Sends `count` events through `send()` (each one INSERT + NOTIFY); returns their message ids. */
  send(count: number): Promise<string[]>;
  /** Deliveries by status and messages still pending, read from the database. */
  state(): Promise<{ succeeded: number; other: number; pendingMessages: number; attempts: number }>;
  close(): Promise<void>;
}

/** Creates the database and an endpoint (every type) pointing at `receiverUrl`. No worker runs here. */
export async function setUpOutbox(receiverUrl: string): Promise<Outbox> {
  const database = await createTestDatabase();
  const sql = database.connect({ max: 10 });
  await migrate(sql);
  const postel = Postel({
    outbound: {
      storage: PostgresStorage({ sql }, { migrate: false }),
      http: { allowPrivateNetworks: true },
    },
  });
  await postel.outbound.endpoints.create({ url: receiverUrl, types: ["*"] });
  return {
    database,
    sql,
    postel,
    async send(count) {
      const ids: string[] = [];
      for (let start = 0; start < count; start += 100) {
        const chunk = Array.from({ length: Math.min(100, count - start) }, (_, i) =>
          postel.outbound.send({ type: "order.created", data: { n: start + i } }),
        );
        ids.push(...(await Promise.all(chunk)).map((result) => result.id));
      }
      return ids;
    },
    async state() {
      const [row] = await sql<{ succeeded: string; other: string; pending: string; attempts: string }[]>`
        SELECT
          (SELECT count(*) FROM postel.deliveries WHERE status = 'succeeded') AS succeeded,
          (SELECT count(*) FROM postel.deliveries WHERE status <> 'succeeded') AS other,
          (SELECT count(*) FROM postel.messages WHERE status = 'pending') AS pending,
          (SELECT count(*) FROM postel.all_attempts) AS attempts`;
      return {
        succeeded: Number(row?.succeeded),
        other: Number(row?.other),
        pendingMessages: Number(row?.pending),
        attempts: Number(row?.attempts),
      };
    },
    close: () => database.drop(),
  };
}

/** Polls `check` every 50 ms until it returns true; fails with `what` after `timeoutMs`. */
export async function eventually(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
