import type { Client, InStatement } from "@libsql/client";
import { HEALTH_BUCKET_MS, Postel } from "@postel/core";
import { SqliteStorage } from "@postel/storage-sqlite";
import { PAYLOAD, timeSortableId } from "../database.js";
import type { Scenario } from "../scenario.js";
import { createBenchFile, SERIES, settle } from "../sqlite-file.js";
import {
  DAY,
  DEAD_LETTER_EVERY,
  ENDPOINTS,
  RETRY_EVERY,
  TENANTS,
  TYPES,
  seeded,
  timePages,
} from "./dashboard.js";

/**
 * `dashboard` on a SQLite file: the same pages, timed the same way, beside the same month of history
 * (1,000,000 messages), seeded as SqliteStorage records it (every attempt a row of `postel_attempts`).
 */
export const sqliteDashboard: Scenario = {
  name: "sqlite-dashboard",
  storage: "sqlite",
  description: "dashboard server time per page beside 1,000,000 messages on a SQLite file (p95 ≤ 100 ms)",
  async run(context) {
    const { scale, log } = context;
    const file = await createBenchFile({ migrate: true });
    const postel = Postel({ outbound: { storage: SqliteStorage({ url: file.url }, { migrate: false }) } });
    try {
      for (let i = 0; i < ENDPOINTS; i++) {
        await postel.outbound.endpoints.create({ url: `https://hooks.example.com/${i}`, types: ["*"] });
      }
      const endpointIds = (await postel.outbound.endpoints.list({ limit: ENDPOINTS })).items.map((e) => e.id);
      const started = Date.now();
      await seedSqliteDashboard(file.client, scale.historyRows, endpointIds, log);
      log(seeded(scale.historyRows, started));
      await checkSeed(postel);
      return await timePages(context, "sqlite-dashboard", postel, endpointIds);
    } finally {
      await postel.close();
      await file.remove();
    }
  },
};

/** The pages must show real data: dead letters, a type's and a tenant's messages, the last hour's attempts. */
async function checkSeed(postel: ReturnType<typeof Postel>): Promise<void> {
  const { outbound } = postel;
  const checks = {
    "dead letters": (await outbound.deadLetters.list({ limit: 1 })).items.length,
    [`messages of type ${TYPES[2]}`]: (await outbound.messages.list({ type: TYPES[2]!, limit: 1 })).items
      .length,
    [`messages of ${TENANTS[7]}`]: (await outbound.messages.list({ tenantId: TENANTS[7]!, limit: 1 })).items
      .length,
    "attempts in the last hour": (await outbound.stats({ window: 3_600_000 })).attempts.total,
  };
  const empty = Object.entries(checks).filter(([, n]) => n === 0);
  if (empty.length > 0) throw new Error(`the seed shows no ${empty.map(([what]) => what).join(", ")}`);
}

/** Message `i`'s type, tenant and endpoint, picked from JSON arrays bound as `:types`, `:tenants`, `:endpoints`. */
const PICK = `:types ->> (i % ${TYPES.length}) AS type, :tenants ->> (i % ${TENANTS.length}) AS tenant,
  :endpoints ->> (i % ${ENDPOINTS}) AS endpoint_id`;

/** `width` serial characters of `i`, padded with `pad` (`lpad` in PostgreSQL). */
const serial = (pad: string, width = 16) => `substr('${pad.repeat(width)}' || i, -${width})`;

/**
 * `seedDashboardData` on SQLite, in one write transaction per table (recursive CTEs in place of
 * generate_series): messages `i` created `stepMs` apart over 30 days with time-sortable ids, one
 * delivery each and every attempt a row of `postel_attempts` (every 250th dead-lettered after 3, every
 * 20th succeeded on its second), the health buckets those attempts filled, and the last ten minutes'
 * live work. Then the WAL is checkpointed; no ANALYZE (see `settle`).
 */
export async function seedSqliteDashboard(
  client: Client,
  count: number,
  endpointIds: string[],
  log: (line: string) => void,
): Promise<void> {
  const now = Date.now();
  const lists = {
    types: JSON.stringify(TYPES),
    tenants: JSON.stringify(TENANTS),
    endpoints: JSON.stringify(endpointIds),
  };
  const history = {
    ...lists,
    count,
    start: now - 30 * DAY,
    step: Math.floor((30 * DAY - 15 * 60_000) / count),
  };
  const step = async (what: string, statement: InStatement) => {
    const started = Date.now();
    await client.batch([statement], "write");
    log(`    ${what} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  };
  await client.execute("PRAGMA cache_size = -500000");
  await step("messages", {
    sql: `${SERIES}, g AS (SELECT i, :start + i * :step AS t, ${PICK} FROM series)
      INSERT INTO postel_messages (id, type, payload, tenant_id, status, created_at, fanned_out_at, finished_at)
      SELECT ${timeSortableId("msg", "t", serial("0"))}, type, :payload, tenant,
        CASE WHEN i % ${DEAD_LETTER_EVERY} = 0 THEN 'dead-lettered' ELSE 'dispatched' END, t, t,
        t + 3 + CASE WHEN i % ${DEAD_LETTER_EVERY} = 0 THEN 150000 WHEN i % ${RETRY_EVERY} = 0 THEN 30000 ELSE 0 END
      FROM g`,
    args: { ...history, payload: PAYLOAD },
  });
  // A delivery's id is its message's with the prefix dlv_: made at the same time, it sorts the same.
  await step("deliveries", {
    sql: `INSERT INTO postel_deliveries (id, message_id, endpoint_id, webhook_id, status, retries_used,
        attempts_made, next_attempt_at, created_at, updated_at, last_error)
      SELECT 'dlv' || substr(id, 4), id, :endpoints ->> (i % ${ENDPOINTS}), id,
        CASE WHEN dead THEN 'dead-lettered' ELSE 'succeeded' END, made - 1, made, finished_at - 3, created_at,
        finished_at, CASE WHEN dead THEN 'HTTP 500' END
      FROM (SELECT *, CASE WHEN dead THEN 3 WHEN i % ${RETRY_EVERY} = 0 THEN 2 ELSE 1 END AS made
        FROM (SELECT id, created_at, finished_at, status = 'dead-lettered' AS dead,
          CAST(substr(id, -16) AS INTEGER) AS i FROM postel_messages))`,
    args: { endpoints: lists.endpoints },
  });
  // Retries 30 s, then 2 min, after the first attempt; attempt ids are made when the attempt ends.
  await step("attempts", {
    sql: `WITH k(n, after) AS (VALUES (1, 0), (2, 30000), (3, 150000))
      INSERT INTO postel_attempts (id, delivery_id, message_id, endpoint_id, webhook_id, attempt_number,
        started_at, latency_ms, outcome, status_code, response_snippet)
      SELECT ${timeSortableId("att", "created_at + after + 3", `${serial("0", 15)} || n`)}, id, message_id,
        endpoint_id, webhook_id, n, created_at + after, 3, outcome,
        CASE outcome WHEN 'success' THEN 200 ELSE 500 END, CASE outcome WHEN 'success' THEN 'ok' ELSE 'error' END
      FROM (SELECT d.*, k.n, k.after, CAST(substr(d.id, -16) AS INTEGER) AS i,
          CASE WHEN k.n = d.attempts_made AND d.status = 'succeeded' THEN 'success' ELSE 'retryable' END AS outcome
        FROM postel_deliveries d JOIN k ON k.n <= d.attempts_made)`,
  });
  // Live work, one message every 500 ms over the last 10 minutes: the newest 200 not fanned out yet;
  // of the others, half due now and half waiting for a retry after a failed first attempt.
  const live = { ...lists, count: 1200, start: Date.now() - 600_000 };
  const liveRows = `${SERIES}, g AS (SELECT i, :start + i * 500 AS t, ${PICK} FROM series)`;
  const id = (prefix: string, time = "t") => timeSortableId(prefix, time, serial("9"));
  await step("live work", {
    sql: `${liveRows}
      INSERT INTO postel_messages (id, type, payload, tenant_id, status, created_at, fanned_out_at)
      SELECT ${id("msg")}, type, :payload, tenant, 'pending', t, CASE WHEN i <= 1000 THEN t END FROM g`,
    args: { ...live, payload: PAYLOAD },
  });
  await step("live deliveries", {
    sql: `${liveRows}
      INSERT INTO postel_deliveries (id, message_id, endpoint_id, webhook_id, status, retries_used,
        attempts_made, next_attempt_at, created_at, updated_at, last_error)
      SELECT ${id("dlv")}, ${id("msg")}, endpoint_id, ${id("msg")}, 'pending', i % 2, i % 2,
        CASE WHEN i % 2 = 0 THEN t ELSE :now + i * 500 END, t, t + 12, CASE WHEN i % 2 = 1 THEN 'HTTP 503' END
      FROM g WHERE i <= 1000`,
    args: { ...live, now: Date.now() },
  });
  await step("live attempts", {
    sql: `${liveRows}
      INSERT INTO postel_attempts (id, delivery_id, message_id, endpoint_id, webhook_id, attempt_number,
        started_at, latency_ms, outcome, status_code, response_snippet)
      SELECT ${id("att", "t + 12")}, ${id("dlv")}, ${id("msg")}, endpoint_id, ${id("msg")}, 1, t, 12,
        'retryable', 503, 'unavailable'
      FROM g WHERE i <= 1000 AND i % 2 = 1`,
    args: live,
  });
  // In time order, as workers add the buckets: a window's buckets sit together in the table.
  await step("health buckets", {
    sql: `INSERT INTO postel_endpoint_health (endpoint_id, bucket_start, attempts, failures)
      SELECT endpoint_id, started_at - started_at % ${HEALTH_BUCKET_MS}, count(*), sum(outcome <> 'success')
      FROM postel_attempts GROUP BY 1, 2 ORDER BY 2, 1`,
  });
  await settle(client);
}
