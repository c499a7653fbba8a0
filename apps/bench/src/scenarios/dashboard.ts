import { type Clock, HEALTH_BUCKET_MS, Postel } from "@postel/core";
import { createDashboard, type Dashboard, type DashboardPostel } from "@postel/dashboard";
import { PostgresStorage } from "@postel/storage-postgres";
import postgres from "postgres";
import {
  type BenchDatabase,
  createBenchDatabase,
  PAYLOAD,
  seedHistory,
  timeSortableId,
} from "../database.js";
import { createEndpointsAt } from "../drain-run.js";
import type { Scenario, ScenarioContext } from "../scenario.js";
import { formatNumber, type Metric, median, percentile } from "../stats.js";

/** A day in ms. */
export const DAY = 86_400_000;
/** Endpoints of the seeded month, every message fanned out to one of them. */
export const ENDPOINTS = 20;
/** Message `i` has type `TYPES[i % 7]`. */
export const TYPES = [
  "order.created",
  "order.paid",
  "order.shipped",
  "order.refunded",
  "invoice.issued",
  "customer.updated",
  "subscription.renewed",
];
/** Message `i` has tenant `TENANTS[i % 50]`. */
export const TENANTS = Array.from({ length: 50 }, (_, i) => `tenant_${String(i + 1).padStart(2, "0")}`);
/** Every 250th message dead-lettered (4,000 in a million), every 20th succeeded on a retry. */
export const DEAD_LETTER_EVERY = 250;
/** See `DEAD_LETTER_EVERY`. */
export const RETRY_EVERY = 20;
/** Pages followed through `nextCursor` before the deep page is timed. */
const DEEP_PAGES = 20;
const WARM_UPS = 3;
const TARGET_MS = 100;

/** One page of the dashboard to time: its path and query, from the seeded data. */
export interface PageRequest {
  name: string;
  path: string;
}

/**
 * Server time per dashboard page beside a month of history (issue 18: ≤ 100 ms p95 with 1,000,000
 * messages): the handler is called in this process, `dashboard(new Request(...))`, one request at a
 * time, each timed until its body is read.
 */
export const dashboard: Scenario = {
  name: "dashboard",
  storage: "postgres",
  description: "dashboard server time per page beside 1,000,000 messages (p95 ≤ 100 ms)",
  async run(context) {
    const { scale, log } = context;
    const database = await createBenchDatabase();
    // The application's pool, as an app mounting the dashboard would share it.
    const pool = postgres(database.url, { max: 10, onnotice: () => {} });
    try {
      const started = Date.now();
      const endpointIds = await seedDashboardData(database, scale.historyRows);
      log(seeded(scale.historyRows, started));
      const postel = Postel({ outbound: { storage: PostgresStorage({ sql: pool }, { migrate: false }) } });
      return await timePages(context, "dashboard", postel, endpointIds);
    } finally {
      await pool.end({ timeout: 5 });
      await database.drop();
    }
  },
};

/** The progress line after seeding `count` messages, begun at `started`. */
export function seeded(count: number, started: number): string {
  return (
    `  seeded ${count.toLocaleString("en-US")} messages over 30 days to ${ENDPOINTS} endpoints, with their ` +
    `deliveries, attempts, health buckets and live work, in ${Math.round((Date.now() - started) / 1000)} s`
  );
}

/** Times each dashboard page `samples` times per run (after warm-ups) and returns its p95 (p50) per page. */
export async function timePages(
  context: ScenarioContext,
  scenario: string,
  postel: DashboardPostel,
  endpointIds: string[],
): Promise<Metric[]> {
  const pages = await dashboardPages(postel, endpointIds);
  return timeCalls(context, scenario, pageCalls(postel, pages, TARGET_MS));
}

/** One call to time: a dashboard page or an API call, with its p95 target in ms (none: only reported). */
export interface TimedCall {
  name: string;
  call: () => Promise<unknown>;
  targetMs?: number | undefined;
}

/**
 * Times each call 50 times per run (10 with `--quick`) after 3 warm-ups, one at a time, and returns
 * its p95 (p50). With `budgetMs`, a call stops warming up and sampling once a run has spent that long
 * on it (after at least one warm-up and one sample): for calls that take seconds, whose figures then
 * rest on fewer samples (the table says how many).
 */
export async function timeCalls(
  { scale, log }: ScenarioContext,
  scenario: string,
  calls: TimedCall[],
  budgetMs = Number.POSITIVE_INFINITY,
): Promise<Metric[]> {
  const samples = scale.quick ? 10 : 50;
  const p50: number[][] = calls.map(() => []);
  const p95: number[][] = calls.map(() => []);
  const fewest: number[] = calls.map(() => samples);
  for (let run = 1; run <= scale.runs; run++) {
    for (const [i, { name, call }] of calls.entries()) {
      const deadline = performance.now() + budgetMs;
      for (let n = 0; n < WARM_UPS && (n === 0 || performance.now() < deadline); n++) await call();
      const times: number[] = [];
      while (times.length < samples && (times.length === 0 || performance.now() < deadline)) {
        const started = performance.now();
        await call();
        times.push(performance.now() - started);
      }
      fewest[i] = Math.min(fewest[i]!, times.length);
      p50[i]!.push(percentile(times, 50));
      p95[i]!.push(percentile(times, 95));
      log(
        `  run ${run}/${scale.runs} ${name}: p50 ${p50[i]!.at(-1)!.toFixed(1)} ms, p95 ${p95[i]!.at(-1)!.toFixed(1)} ms` +
          (times.length < samples ? ` (${count(times.length)})` : ""),
      );
    }
  }
  return calls.map(({ name, targetMs }, i) => {
    const value = median(p95[i]!);
    const few = fewest[i]! < samples ? `, ${count(fewest[i]!)} a run` : "";
    return {
      scenario,
      name: `${name}: p95 (p50)`,
      unit: "ms",
      postel: value,
      display: `${formatNumber(value)} (${formatNumber(median(p50[i]!))})${few}`,
      postelRuns: p95[i]!,
      ...(targetMs === undefined ? {} : { target: { op: "<=", value: targetMs } }),
    } satisfies Metric;
  });
}

function count(samples: number): string {
  return `${samples} sample${samples === 1 ? "" : "s"}`;
}

/**
 * The pages as calls of the dashboard's handler, in this process (`dashboard(new Request(...))`), each
 * until its body is read; anything but 200 fails the run.
 */
export function pageCalls(
  postel: DashboardPostel,
  pages: PageRequest[],
  targetMs: number,
  clock?: Clock,
): TimedCall[] {
  const handler = createDashboard({ postel, authorize: () => true, clock });
  return pages.map((page) => ({ name: page.name, targetMs, call: () => fetchPage(handler, page) }));
}

async function fetchPage(handler: Dashboard, page: PageRequest): Promise<void> {
  const response = await handler(new Request(`http://bench.local${page.path}`));
  const body = await response.text();
  if (response.status !== 200) {
    throw new Error(`${page.name} (${page.path}) answered ${response.status}: ${body.slice(0, 300)}`);
  }
}

/** The pages an operator opens, with filters and ids taken from the seeded data. */
export async function dashboardPages(postel: DashboardPostel, endpointIds: string[]): Promise<PageRequest[]> {
  const { outbound } = postel;
  const endpoint = endpointIds[3]!;
  const [deadLetter] = (await outbound.deadLetters.list({ limit: 1 })).items;
  if (!deadLetter) throw new Error("the seed made no dead letters");
  let cursor: string | undefined;
  for (let n = 0; n < DEEP_PAGES; n++) {
    cursor = (await outbound.messages.list({ limit: 50, cursor })).nextCursor ?? undefined;
  }
  // A day in the middle of the month: 10 to 9 days ago (the page reads `datetime-local` fields as UTC).
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 16);
  const now = Date.now();
  const range = new URLSearchParams({ since: day(now - 10 * DAY), until: day(now - 9 * DAY) });
  const empty = new URLSearchParams({ since: day(now + 3_600_000), until: day(now + 7_200_000) });
  const query = (params: Record<string, string>) => `?${new URLSearchParams(params)}`;
  return [
    { name: "live view", path: "/" },
    { name: "live view's live.json", path: "/live.json" },
    { name: "endpoints", path: "/endpoints" },
    { name: "one endpoint (health over time)", path: `/endpoints/${endpoint}` },
    { name: "messages, first page", path: "/messages" },
    { name: "messages, status dead-lettered", path: `/messages${query({ status: "dead-lettered" })}` },
    { name: "messages, status expired (none)", path: `/messages${query({ status: "expired" })}` },
    { name: "messages, one type", path: `/messages${query({ type: TYPES[2]! })}` },
    { name: "messages, one tenant", path: `/messages${query({ tenant: TENANTS[7]! })}` },
    // A tenant no message carries: without the search window, the walk of the whole history.
    { name: "messages, a tenant with none", path: `/messages${query({ tenant: "tenant_none" })}` },
    { name: "messages, one day 10 days ago", path: `/messages?${range}` },
    // A range no message falls in (the next hour): without the bound of `since`, the whole history.
    { name: "messages, an hour with none", path: `/messages?${empty}` },
    { name: `messages, page ${DEEP_PAGES + 1} by cursor`, path: `/messages${query({ cursor: cursor! })}` },
    { name: "one message's trail", path: `/messages/${deadLetter.messageId}` },
    { name: "dead letters, first page", path: "/dead-letters" },
    { name: "dead letters, one endpoint", path: `/dead-letters${query({ endpoint })}` },
  ];
}

/**
 * A month of history through `seedHistory` (time-sortable ids, several types and tenants, dead
 * letters and retries over 20 endpoints), the health buckets those attempts filled, and the last ten
 * minutes' live work: due and scheduled deliveries and messages not fanned out yet.
 */
async function seedDashboardData(database: BenchDatabase, count: number): Promise<string[]> {
  const { sql } = database;
  await createEndpointsAt(
    database,
    Array.from({ length: ENDPOINTS }, (_, i) => ({ url: `https://hooks.example.com/${i}`, types: ["*"] })),
  );
  const endpointIds = (await sql<{ id: string }[]>`SELECT id FROM postel.endpoints ORDER BY id`).map(
    (e) => e.id,
  );
  const now = Date.now();
  await seedHistory(sql, count, {
    endpointIds,
    types: TYPES,
    tenants: TENANTS,
    start: now - 30 * DAY,
    stepMs: Math.floor((30 * DAY - 15 * 60_000) / count),
    deadLetterEvery: DEAD_LETTER_EVERY,
    retryEvery: RETRY_EVERY,
  });
  // In time order, as workers add the buckets: a window's buckets sit together on disk.
  await sql`
    INSERT INTO postel.endpoint_health (endpoint_id, bucket_start, attempts, failures)
    SELECT endpoint_id, started_at - started_at % ${HEALTH_BUCKET_MS}, count(*), count(*) FILTER (WHERE outcome <> 'success')
    FROM postel.all_attempts GROUP BY 1, 2 ORDER BY 2, 1`;
  // Live work, one message every 500 ms over the last 10 minutes: the newest 200 not fanned out yet;
  // of the others, half due now and half waiting for a retry after a failed first attempt.
  const live = () =>
    sql.unsafe(
      `generate_series(1, 1200) AS i CROSS JOIN LATERAL (SELECT ${now - 600_000}::bigint + i * 500 AS t) g`,
    );
  const id = (prefix: string) => sql.unsafe(timeSortableId(prefix, "g.t", "lpad(i::text, 16, '9')"));
  await sql`
    INSERT INTO postel.messages (id, type, payload, tenant_id, status, created_at, fanned_out_at)
    SELECT ${id("msg")}, (${sql.array(TYPES)}::text[])[1 + i % ${TYPES.length}], ${PAYLOAD},
      (${sql.array(TENANTS)}::text[])[1 + i % ${TENANTS.length}], 'pending', g.t, CASE WHEN i <= 1000 THEN g.t END
    FROM ${live()}`;
  await sql`
    INSERT INTO postel.deliveries (id, message_id, endpoint_id, webhook_id, status, retries_used, attempts_made,
      next_attempt_at, created_at, updated_at, last_error, first_attempt_id, first_attempt_started_at,
      first_attempt_latency_ms, first_attempt_outcome, first_attempt_status_code)
    SELECT ${id("dlv")}, ${id("msg")}, (${sql.array(endpointIds)}::text[])[1 + i % ${endpointIds.length}], ${id("msg")},
      'pending', i % 2, i % 2, CASE WHEN i % 2 = 0 THEN g.t ELSE ${now}::bigint + i * 500 END, g.t, g.t,
      CASE WHEN i % 2 = 1 THEN 'HTTP 503' END, CASE WHEN i % 2 = 1 THEN ${id("att")} END,
      CASE WHEN i % 2 = 1 THEN g.t END, CASE WHEN i % 2 = 1 THEN 12 END,
      CASE WHEN i % 2 = 1 THEN 'retryable' END, CASE WHEN i % 2 = 1 THEN 503 END
    FROM ${live()} WHERE i <= 1000`;
  // Not postel.endpoints: autovacuum never analyzes 20 rows (its threshold is 50 changes), so the
  // planner guesses its size as on an application's database.
  await sql`VACUUM ANALYZE postel.messages, postel.deliveries, postel.endpoint_health`;
  return endpointIds;
}
