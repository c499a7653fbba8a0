import type { PendingQuery, Row } from "postgres";
import { beforeAll, expect, test } from "vitest";
import {
  countAuditEntriesStatement,
  listAuditEntriesStatement,
  pruneAuditEntriesStatement,
} from "../src/audit-log/audit-entries.js";
import { migratedDatabase } from "./support/database.js";

// The audit log grows for as long as it is kept: a page, a rate-limit count and a prune batch must
// read the rows they return or count, never the whole log. On a few thousand rows a plan that scans
// the table shows up as a Seq Scan, so these tests fail on one.
const NOW = Date.UTC(2026, 0, 1);
const ENTRIES = 6_000;
const TENANTS = 20;

const db = migratedDatabase();

beforeAll(async () => {
  // A busy hour: an entry every 600 ms, spread over the tenants and three actions.
  await db.sql`
    INSERT INTO postel.audit_log (id, at, tenant_id, actor, action, source, key)
    SELECT 'aud_' || lpad(n::text, 7, '0'), ${NOW - 3_600_000}::bigint + n * 600,
      't' || (n % ${TENANTS}), 'user-' || (n % 7),
      (ARRAY['endpoint.create', 'endpoint.update', 'link.exchange'])[n % 3 + 1], 'portal',
      CASE WHEN n % 3 = 2 THEN 'nonce-' || n END
    FROM generate_series(1, ${ENTRIES}) AS n`;
  // A tenant with few entries, the oldest: walking the primary key for its page would read the whole log.
  await db.sql`
    INSERT INTO postel.audit_log (id, at, tenant_id, actor, action, source)
    SELECT 'aud_0000000_' || n, ${NOW - 3_600_000}::bigint, 'rare', 'ada', 'endpoint.create', 'portal'
    FROM generate_series(1, 5) AS n`;
  await db.sql`VACUUM ANALYZE postel.audit_log`;
});

async function plan(statement: PendingQuery<Row[]>): Promise<string> {
  return (await db.sql`EXPLAIN ${statement}`).map((row) => row["QUERY PLAN"]).join("\n");
}

test("a page of the log walks the primary key newest first, and a rare tenant's page reads that tenant's rows alone", async () => {
  const all = await plan(listAuditEntriesStatement(db.sql, { limit: 101 }));
  expect(all).not.toMatch(/Seq Scan|Sort/);
  expect(all).toContain("Index Scan Backward using audit_log_pkey");
  const tenant = await plan(listAuditEntriesStatement(db.sql, { limit: 101, tenantId: "rare" }));
  // The tenant's rows alone, through one of its indexes (a sort of a few rows is as cheap as a walk).
  expect(tenant).not.toContain("Seq Scan");
  expect(tenant).toMatch(/Index Cond: \(tenant_id = 'rare'::text/);
});

test("a rate-limit count reads one tenant's entries of the actions since the time, on (tenant_id, action, at)", async () => {
  for (const tenantId of ["t3", null]) {
    const text = await plan(
      countAuditEntriesStatement(db.sql, {
        tenantId,
        actions: ["link.exchange", "endpoint.create"],
        since: NOW - 1_800_000,
      }),
    );
    expect(text).not.toContain("Seq Scan");
    expect(text).toContain("audit_log_tenant_action_at_idx");
  }
});

test("a prune batch takes the oldest entries on audit_log_at_idx", async () => {
  const text = await plan(pruneAuditEntriesStatement(db.sql, { before: NOW - 1_800_000, limit: 500 }));
  expect(text).not.toContain("Seq Scan");
  expect(text).toContain("audit_log_at_idx");
});
