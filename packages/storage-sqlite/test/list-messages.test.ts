import { type MessageQuery, messageIdBound } from "@postel/core/storage";
import { expect, test } from "vitest";
import { listMessagesStatement } from "../src/operations/listings.js";
import { freshStorageEachTest } from "./temp-db.js";

const NOW = Date.UTC(2026, 0, 1);

const storage = freshStorageEachTest();

// The plan of the statement `listMessages` runs for `query` (SQLite plans it alike for any arguments).
async function plan(query: MessageQuery): Promise<string> {
  const statement = listMessagesStatement(query);
  const rows = await storage().client.execute({
    sql: `EXPLAIN QUERY PLAN ${statement.sql}`,
    args: statement.args ?? {},
  });
  return rows.rows.map((row) => String(row["detail"])).join("\n");
}

test("a page of dead-lettered or expired messages walks their partial index newest first, never the history", async () => {
  for (const status of ["dead-lettered", "expired"] as const) {
    const first = await plan({ status, limit: 51 });
    expect(first).toBe("SEARCH postel_messages USING INDEX postel_messages_dead_or_expired (status=?)");
    const next = await plan({ status, limit: 51, after: messageIdBound(NOW), since: NOW - 86_400_000 });
    expect(next).toBe(
      "SEARCH postel_messages USING INDEX postel_messages_dead_or_expired (status=? AND id<?)",
    );
  }
});

test("a page past a cursor or before `until` is a range of the primary key, not a walk from the newest message", async () => {
  const query = { limit: 51, after: messageIdBound(NOW), since: NOW - 86_400_000, until: NOW };
  expect(await plan(query)).toBe(
    "SEARCH postel_messages USING INDEX sqlite_autoindex_postel_messages_1 (id<?)",
  );
  expect(await plan({ ...query, type: "order.paid", from: messageIdBound(NOW - 3_600_000) })).toBe(
    "SEARCH postel_messages USING INDEX sqlite_autoindex_postel_messages_1 (id>? AND id<?)",
  );
});

test("a page of a common status or a time range walks the key newest first instead of sorting the matches", async () => {
  const plans = [
    await plan({ limit: 51, status: "dispatched" }),
    await plan({ limit: 51, status: "pending", since: NOW - 86_400_000 }),
    await plan({ limit: 51, since: NOW - 86_400_000, until: NOW }),
  ];
  for (const p of plans) {
    expect(p).toBe("SCAN postel_messages USING INDEX sqlite_autoindex_postel_messages_1");
  }
});

test("the status filter pages through dead-lettered messages newest first and leaves the others out", async () => {
  await storage().client.execute(`
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30)
    INSERT INTO postel_messages (id, type, payload, status, created_at)
    SELECT printf('msg_%03d', i), 'order.paid', '{}', CASE WHEN i % 3 = 0 THEN 'dead-lettered' ELSE 'dispatched' END,
      ${NOW} + i FROM n`);
  const first = await storage().operations.listMessages({ status: "dead-lettered", limit: 4 });
  expect(first.map((m) => m.id)).toEqual(["msg_030", "msg_027", "msg_024", "msg_021"]);
  const rest = await storage().operations.listMessages({
    status: "dead-lettered",
    limit: 10,
    after: "msg_021",
    since: NOW + 4,
  });
  expect(rest.map((m) => m.id)).toEqual(["msg_018", "msg_015", "msg_012", "msg_009", "msg_006"]);
  expect(await storage().operations.listMessages({ status: "expired", limit: 10 })).toEqual([]);
});

test("a page of one tenant's messages is a range of postel_messages_tenant, newest first", async () => {
  expect(await plan({ limit: 51, tenantId: "acme" })).toBe(
    "SEARCH postel_messages USING INDEX postel_messages_tenant (tenant_id=?)",
  );
  expect(await plan({ limit: 51, tenantId: "acme", after: messageIdBound(NOW) })).toBe(
    "SEARCH postel_messages USING INDEX postel_messages_tenant (tenant_id=? AND id<?)",
  );
  await storage().client.execute(`
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
    INSERT INTO postel_messages (id, type, payload, tenant_id, status, created_at)
    SELECT printf('msg_%03d', i), 'order.paid', '{}', CASE WHEN i % 100 = 0 THEN 'acme' END, 'dispatched', ${NOW} + i FROM n`);
  expect(storage().operations.indexedMessageFilters).toEqual(["tenantId"]);
  const page = await storage().operations.listMessages({ tenantId: "acme", limit: 2 });
  expect(page.map((m) => m.id)).toEqual(["msg_300", "msg_200"]);
});
