import { expect, test } from "vitest";
import {
  countAuditEntriesStatement,
  listAuditEntriesStatement,
  pruneAuditEntriesStatement,
} from "../src/audit-log/audit-entries.js";
import type { Statement } from "../src/internal/database.js";
import { freshStorageEachTest } from "./temp-db.js";

const NOW = Date.UTC(2026, 0, 1);

const storage = freshStorageEachTest();

// The plan of `statement` (SQLite plans it alike for any arguments).
async function plan(statement: Statement): Promise<string> {
  const rows = await storage().client.execute({
    sql: `EXPLAIN QUERY PLAN ${statement.sql}`,
    args: statement.args ?? {},
  });
  return rows.rows.map((row) => String(row["detail"])).join("\n");
}

test("a page of the log walks the primary key newest first, and one tenant's page its (tenant_id, id) index", async () => {
  expect(await plan(listAuditEntriesStatement({ limit: 101, since: NOW - 3_600_000 }))).toBe(
    "SCAN postel_audit_log USING INDEX sqlite_autoindex_postel_audit_log_1",
  );
  expect(await plan(listAuditEntriesStatement({ limit: 101, tenantId: "acme", after: "aud_1" }))).toBe(
    "SEARCH postel_audit_log USING INDEX postel_audit_log_tenant (tenant_id=? AND id<?)",
  );
});

test("a rate-limit count reads one tenant's entries of the actions since the time, on (tenant_id, action, at)", async () => {
  for (const tenantId of ["acme", null]) {
    const text = await plan(
      countAuditEntriesStatement({ tenantId, actions: ["link.exchange", "endpoint.create"], since: NOW }),
    );
    expect(text).toContain(
      "SEARCH postel_audit_log USING COVERING INDEX postel_audit_log_tenant_action_at (tenant_id=? AND action=? AND at>?)",
    );
  }
});

test("a prune batch takes the oldest entries on postel_audit_log_at", async () => {
  const text = await plan(pruneAuditEntriesStatement({ before: NOW, limit: 500 }));
  expect(text).toContain("SEARCH postel_audit_log USING INDEX postel_audit_log_at (at<?)");
  expect(text).not.toContain("SCAN");
});
