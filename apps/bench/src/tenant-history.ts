import { Postel } from "@postel/core";
import { PostgresStorage } from "@postel/storage-postgres";
import type { Sql } from "postgres";
import { type BenchDatabase, seedHistory, timeSortableId } from "./database.js";
import { DAY, DEAD_LETTER_EVERY, RETRY_EVERY, TYPES } from "./scenarios/dashboard.js";

/** The tenant with the most messages: every `HEAVY_EVERY`-th one. */
export const HEAVY_TENANT = "tenant_00001";
/**
 * Every 19th message is the heavy tenant's (5.3%): 19 shares no factor with the dead-letter and retry
 * periods (250, 20), so it has its share of both.
 */
const HEAVY_EVERY = 19;
/** A tenant with endpoints and no message. */
export const EMPTY_TENANT = "tenant_none";
/** Messages per tenant on average: 1,000,000 over 10,000 tenants, and `--quick` keeps the ratio. */
const MESSAGES_PER_TENANT = 100;

/** What `seedTenantHistory` made: the tenants' names and the ids to open. */
export interface TenantHistory {
  /** Tenants with messages, `tenant_00001` (the heavy one) to `tenant_<tenants>`. */
  tenants: number;
  /** A tenant with an average share, for the search-window figures. */
  typicalTenant: string;
  /** The heavy and the empty tenant's endpoints, oldest first. */
  endpointIds: Record<string, string[]>;
  /** The heavy tenant's newest dead-lettered message (a trail of three attempts). */
  heavyMessageId: string;
}

/**
 * A month of `count` finished messages over `count / 100` tenants through `seedHistory`: every 19th
 * message is `tenant_00001`'s, the others go round the remaining tenants, each message to one of its
 * tenant's own 1–3 endpoints; plus `tenant_none`, with two endpoints and no message. The empty
 * tenant's endpoints are created through Postel's API, and the first one is cloned in SQL for the
 * others (20,000 creates would take longer than the million messages).
 */
export async function seedTenantHistory(
  database: BenchDatabase,
  count: number,
  log: (line: string) => void,
): Promise<TenantHistory> {
  const { sql } = database;
  const tenants = Math.max(10, Math.round(count / MESSAGES_PER_TENANT));
  const storage = PostgresStorage({ sql }, { migrate: false });
  const { outbound } = Postel({ outbound: { storage } });
  const empty: string[] = [];
  for (const n of [0, 1]) {
    const endpoint = await outbound.endpoints.create({
      url: `https://hooks.example.com/none/${n}`,
      tenantId: EMPTY_TENANT,
    });
    empty.push(endpoint.id);
  }
  const started = Date.now();
  // The clones' ids carry the template's time: ids of endpoints made in the same millisecond.
  const [template] = await sql<{ created_at: string }[]>`
    SELECT created_at FROM postel.endpoints WHERE id = ${empty[0]!}`;
  const endpointId = endpointIdAt(Number(template!.created_at));
  await cloneEndpoints(sql, empty[0]!, tenants, endpointId);
  const [{ endpoints } = { endpoints: 0 }] = await sql<{ endpoints: number }[]>`
    SELECT count(*)::int AS endpoints FROM postel.endpoints`;
  log(
    `  ${endpoints.toLocaleString("en-US")} endpoints of ${(tenants + 1).toLocaleString("en-US")} tenants in ${seconds(started)} s`,
  );

  // Tenant t of message i, and its endpoint slot s (0 to t % 3), as SQL over i.
  const t = `(CASE WHEN i % ${HEAVY_EVERY} = 0 THEN 1 ELSE 2 + i % ${tenants - 1} END)`;
  const s = `((i / ${HEAVY_EVERY}) % (1 + ${t} % 3))`;
  const now = Date.now();
  await seedHistory(sql, count, {
    owner: { tenantId: tenantName(t), endpointId: endpointId(t, s) },
    types: TYPES,
    start: now - 30 * DAY,
    stepMs: Math.floor((30 * DAY - 15 * 60_000) / count),
    deadLetterEvery: DEAD_LETTER_EVERY,
    retryEvery: RETRY_EVERY,
    log,
  });
  await sql`VACUUM ANALYZE postel.endpoints, postel.endpoint_secrets`;

  const typicalTenant = `tenant_${String(Math.ceil(tenants / 2)).padStart(5, "0")}`;
  const heavy = await sql<{ id: string }[]>`
    SELECT id FROM postel.endpoints WHERE tenant_id = ${HEAVY_TENANT} ORDER BY id`;
  const endpointIds = { [EMPTY_TENANT]: empty, [HEAVY_TENANT]: heavy.map((row) => row.id) };
  const [message] = await sql<{ id: string }[]>`
    SELECT id FROM postel.messages WHERE status = 'dead-lettered' AND tenant_id = ${HEAVY_TENANT}
    ORDER BY id DESC LIMIT 1`;
  if (!message) throw new Error(`the seed gave ${HEAVY_TENANT} no dead-lettered message`);
  return { tenants, typicalTenant, endpointIds, heavyMessageId: message.id };
}

/**
 * Copies endpoint `templateId` (every column, so a column added to the table is copied too) to
 * slots 0 to t % 3 of tenants 1 to `tenants`, with its signing secret.
 */
async function cloneEndpoints(
  sql: Sql,
  templateId: string,
  tenants: number,
  endpointId: (t: string, s: string) => string,
): Promise<void> {
  const columns = await sql<{ name: string }[]>`
    SELECT column_name AS name FROM information_schema.columns
    WHERE table_schema = 'postel' AND table_name = 'endpoints' ORDER BY ordinal_position`;
  const replaced: Record<string, string> = {
    id: endpointId("t", "s"),
    url: `'https://hooks.example.com/' || t || '/' || s`,
    tenant_id: tenantName("t"),
  };
  const names = columns.map((column) => column.name);
  await sql.unsafe(
    `INSERT INTO postel.endpoints (${names.map((name) => `"${name}"`).join(", ")})
    SELECT ${names.map((name) => replaced[name] ?? `e."${name}"`).join(", ")}
    FROM postel.endpoints e CROSS JOIN generate_series(1, ${tenants}) AS t CROSS JOIN generate_series(0, 2) AS s
    WHERE e.id = $1 AND s <= t % 3`,
    [templateId],
  );
  await sql`
    INSERT INTO postel.endpoint_secrets (endpoint_id, secret, created_at, expires_at)
    SELECT e.id, x.secret, x.created_at, x.expires_at
    FROM postel.endpoints e JOIN postel.endpoint_secrets x ON x.endpoint_id = ${templateId}
    WHERE e.tenant_id <> ${EMPTY_TENANT}`;
}

/** SQL of tenant `t`'s name (`t` an integer expression). */
function tenantName(t: string): string {
  return `'tenant_' || lpad((${t})::text, 5, '0')`;
}

/**
 * SQL of the id of tenant `t`'s endpoint in slot `s` (integer expressions): time-sortable like core's,
 * made at `time`, then the serial 3t + s, so a tenant's endpoints sit together in id order.
 */
function endpointIdAt(time: number): (t: string, s: string) => string {
  return (t, s) => timeSortableId("ep", String(time), `lpad((3 * ${t} + ${s})::text, 16, '0')`);
}

function seconds(since: number): number {
  return Math.round((Date.now() - since) / 1000);
}
