import { HEALTH_BUCKET_MS } from "@postel/core";
import { type BenchDatabase, PAYLOAD, seedHistory, timeSortableId } from "./database.js";
import { createEndpointsAt } from "./drain-run.js";
import { DAY, TENANTS, TYPES } from "./scenarios/dashboard.js";

const HOUR = 3_600_000;
const ENDPOINTS = 50;
/** Endpoint indexes: one answering 503 (circuit open) and one timing out hold most of the backlog. */
export const DOWN = 0;
const TIMING_OUT = 1;
/** Answers 410 to some deliveries: the permanent failures. */
const GONE = 48;
/** Disabled by an operator two hours ago: its deliveries are held. */
const DISABLED = 49;
/** The outage began this long before the seed's moment. */
const OUTAGE_MS = 6 * HOUR;
/** Finished messages of the month before the outage, per pending delivery. */
const HISTORY_SHARE = 0.3;
const DEAD_LETTER_EVERY = 100;
const RETRY_EVERY = 20;

/** How a share of the outage's messages has a delivery, and where that delivery stands. */
interface Share {
  what: string;
  /** The last character of its delivery ids (a message has one delivery per share). */
  digit: number;
  /** SQL over `i`, the message's number: whether the message has a delivery in this share. */
  where: string;
  /** SQL over `i`: the index of its endpoint. */
  endpoint: string;
  status: "pending" | "held" | "failed";
  /** SQL over `i`: whether its first attempt was made (and failed as `failure` says). */
  attempted: string;
  failure: {
    outcome: "retryable" | "permanent";
    statusCode: number | null;
    errorCode: string | null;
    reason: string;
    latencyMs: number;
    snippet: string | null;
  };
}

const HTTP_503 = {
  outcome: "retryable",
  statusCode: 503,
  errorCode: null,
  reason: "HTTP 503",
  latencyMs: 12,
  snippet: "Service Unavailable",
} as const;

/** The healthy endpoints: every one but those down, timing out and disabled. */
const HEALTHY = `2 + (i / 3) % ${ENDPOINTS - 3}`;

/**
 * Message `i` of the outage has a delivery to the endpoint that is down, to the one timing out when
 * `i % 3 = 0`, to a healthy one when `i % 3 = 1`, to the disabled one (held) when `i % 30 = 2`, and
 * one that failed for good (410) when `i % 300 = 5`: pending deliveries are 5/3 of the messages.
 */
const SHARES: Share[] = [
  {
    what: "the endpoint down",
    digit: 0,
    where: "true",
    endpoint: `${DOWN}`,
    status: "pending",
    attempted: "true",
    failure: HTTP_503,
  },
  {
    what: "the endpoint timing out",
    digit: 1,
    where: "i % 3 = 0",
    endpoint: `${TIMING_OUT}`,
    status: "pending",
    attempted: "true",
    failure: {
      outcome: "retryable",
      statusCode: null,
      errorCode: "TIMEOUT",
      reason: "timeout",
      latencyMs: 30_000,
      snippet: null,
    },
  },
  // Half never tried yet (due now), half waiting for a retry after a 503.
  {
    what: "healthy endpoints",
    digit: 2,
    where: "i % 3 = 1",
    endpoint: HEALTHY,
    status: "pending",
    attempted: "(i / 3) % 2 = 1",
    failure: HTTP_503,
  },
  {
    what: "the disabled endpoint (held)",
    digit: 3,
    where: "i % 30 = 2",
    endpoint: `${DISABLED}`,
    status: "held",
    attempted: "false",
    failure: HTTP_503,
  },
  {
    what: "permanent failures",
    digit: 4,
    where: "i % 300 = 5",
    endpoint: `${GONE}`,
    status: "failed",
    attempted: "true",
    failure: {
      outcome: "permanent",
      statusCode: 410,
      errorCode: null,
      reason: "HTTP 410",
      latencyMs: 8,
      snippet: "Gone",
    },
  },
];

/**
 * An outage at `now`: a month of finished history before it (with dead letters), then 6 hours of
 * messages whose `pending` deliveries number `pending` (see `SHARES`; those of the endpoints down
 * wait for a retry, 1 in 20 due again), the newest messages not fanned out yet, and 24 h of health
 * buckets for every endpoint. Set-based, so a million rows take a minute. Autovacuum stays off on
 * these tables: the only ANALYZE is the scenario's, so the first table state stays the history's.
 */
export async function seedOutage(
  database: BenchDatabase,
  pending: number,
  now: number,
  log: (line: string) => void,
): Promise<string[]> {
  const { sql } = database;
  for (const table of ["messages", "deliveries", "attempts", "endpoint_health"]) {
    await sql.unsafe(`ALTER TABLE postel.${table} SET (autovacuum_enabled = off)`);
  }
  await createEndpointsAt(
    database,
    Array.from({ length: ENDPOINTS }, (_, i) => ({ url: `https://hooks.example.com/${i}`, types: ["*"] })),
  );
  const endpointIds = (await sql<{ id: string }[]>`SELECT id FROM postel.endpoints ORDER BY id`).map(
    (e) => e.id,
  );
  const outageStart = now - OUTAGE_MS;
  const history = Math.round(pending * HISTORY_SHARE);
  await seedHistory(sql, history, {
    endpointIds,
    types: TYPES,
    tenants: TENANTS,
    start: outageStart - 30 * DAY,
    stepMs: Math.floor((30 * DAY) / history),
    deadLetterEvery: DEAD_LETTER_EVERY,
    retryEvery: RETRY_EVERY,
    log,
  });

  const timed = async (what: string, statement: PromiseLike<unknown>) => {
    const started = Date.now();
    await statement;
    log(`  ${what} in ${Math.round((Date.now() - started) / 1000)} s`);
  };
  const messages = Math.round((pending * 3) / 5);
  // Message i at t, spread over the outage up to its last 10 minutes.
  const rows = () =>
    sql.unsafe(`generate_series(1, ${messages}) AS i CROSS JOIN LATERAL (
      SELECT ${outageStart}::bigint + i::bigint * ${OUTAGE_MS - 600_000} / ${messages} AS t) g`);
  const messageId = timeSortableId("msg", "g.t", "lpad(i::text, 16, '0')");
  await timed(
    `${messages.toLocaleString("en-US")} messages of the outage`,
    sql`
    INSERT INTO postel.messages (id, type, payload, tenant_id, status, created_at, fanned_out_at)
    SELECT ${sql.unsafe(messageId)}, (${sql.array(TYPES)}::text[])[1 + i % ${TYPES.length}], ${PAYLOAD},
      (${sql.array(TENANTS)}::text[])[1 + i % ${TENANTS.length}], 'pending', g.t, g.t + 20
    FROM ${rows()}`,
  );
  for (const share of SHARES) {
    const { failure } = share;
    const serial = `lpad(i::text, 15, '0') || '${share.digit}'`;
    const endedAt = `g.t + 50 + ${failure.latencyMs}`;
    const ifAttempted = (value: string) => `CASE WHEN ${share.attempted} THEN ${value} END`;
    // A pending retry is due again (1 in 20) or scheduled within the next hour, in no order of creation.
    const retryAt =
      share.status === "pending"
        ? `CASE WHEN i % 20 = 0 THEN least(g.t + 60000, ${now - 1000}) ELSE ${now + 1000} + i::bigint * 7919 % ${HOUR} END`
        : endedAt;
    await timed(
      `deliveries to ${share.what}`,
      sql`
      INSERT INTO postel.deliveries (id, message_id, endpoint_id, webhook_id, status, retries_used, attempts_made,
        next_attempt_at, created_at, updated_at, last_error, first_attempt_id, first_attempt_started_at,
        first_attempt_latency_ms, first_attempt_outcome, first_attempt_status_code, first_attempt_error_code,
        first_attempt_error, first_attempt_response_snippet)
      SELECT ${sql.unsafe(timeSortableId("dlv", "g.t", serial))}, ${sql.unsafe(messageId)},
        (${sql.array(endpointIds)}::text[])[1 + ${sql.unsafe(share.endpoint)}], ${sql.unsafe(messageId)},
        ${sql.unsafe(`'${share.status}',
        ${share.status === "pending" ? `CASE WHEN ${share.attempted} THEN 1 ELSE 0 END` : "0"},
        CASE WHEN ${share.attempted} THEN 1 ELSE 0 END,
        CASE WHEN ${share.attempted} THEN ${retryAt} ELSE g.t END, g.t,
        CASE WHEN ${share.attempted} THEN ${endedAt} ELSE g.t END, ${ifAttempted(literal(failure.reason))},
        ${ifAttempted(timeSortableId("att", endedAt, serial))}, ${ifAttempted("g.t + 50")},
        ${ifAttempted(`${failure.latencyMs}`)}, ${ifAttempted(literal(failure.outcome))},
        ${ifAttempted(`${failure.statusCode}`)}::int, ${ifAttempted(literal(failure.errorCode))},
        ${ifAttempted(literal(failure.reason))}, ${ifAttempted(literal(failure.snippet))}`)}
      FROM ${rows()} WHERE ${sql.unsafe(share.where)}`,
    );
  }
  // Sent in the last 10 minutes and not fanned out yet: the workers are behind.
  const unfanned = Math.round(pending / 200);
  await timed(
    `${unfanned.toLocaleString("en-US")} messages not fanned out`,
    sql`
    INSERT INTO postel.messages (id, type, payload, tenant_id, status, created_at)
    SELECT ${sql.unsafe(timeSortableId("msg", "g.t", "lpad(i::text, 15, '0') || 'z'"))},
      (${sql.array(TYPES)}::text[])[1 + i % ${TYPES.length}], ${PAYLOAD},
      (${sql.array(TENANTS)}::text[])[1 + i % ${TENANTS.length}], 'pending', g.t
    FROM generate_series(1, ${unfanned}::int) AS i
    CROSS JOIN LATERAL (SELECT ${now - 600_000}::bigint + i::bigint * 600000 / ${unfanned} AS t) g`,
  );
  // Every endpoint's last 24 h, bucket by bucket in time order as workers add them: the two down fail
  // every attempt since the outage began, the disabled one has none since it was disabled.
  const first = Math.floor((now - DAY) / HEALTH_BUCKET_MS) * HEALTH_BUCKET_MS;
  const down = `e.n - 1 IN (${DOWN}, ${TIMING_OUT}) AND b.t >= ${outageStart}`;
  await timed(
    "24 h of health buckets",
    sql`
    INSERT INTO postel.endpoint_health (endpoint_id, bucket_start, attempts, failures)
    SELECT e.id, b.t, CASE WHEN ${sql.unsafe(down)} THEN 2 ELSE 3 + b.k % 5 END,
      CASE WHEN ${sql.unsafe(down)} THEN 2 WHEN b.k % 50 = 0 THEN 1 ELSE 0 END
    FROM generate_series(0, ${DAY / HEALTH_BUCKET_MS}) AS b0(k)
    CROSS JOIN LATERAL (SELECT b0.k AS k, ${first}::bigint + b0.k * ${HEALTH_BUCKET_MS} AS t) b
    CROSS JOIN unnest(${sql.array(endpointIds)}::text[]) WITH ORDINALITY AS e(id, n)
    WHERE b.t <= ${now} AND NOT (e.n - 1 = ${DISABLED} AND b.t >= ${now - 2 * HOUR})
    ORDER BY b.t, e.id`,
  );
  await sql`
    UPDATE postel.endpoints SET state = 'circuit-open', circuit_open_until = ${now + 30_000}
    WHERE id = ${endpointIds[DOWN]!}`;
  await sql`
    UPDATE postel.endpoints SET state = 'disabled', disabled_reason = 'disabled by an operator during the outage'
    WHERE id = ${endpointIds[DISABLED]!}`;
  return endpointIds;
}

/** A constant of this file as an SQL literal. */
function literal(value: string | null): string {
  return value === null ? "NULL" : `'${value.replaceAll("'", "''")}'`;
}
