import { expect, test } from "vitest";
import { freeBlocked } from "../src/delivery/fanout.js";
import type { Statement } from "../src/internal/database.js";
import { countWaitingStatement, listHeldKeysStatement } from "../src/ordering/held-keys.js";
import { keysOf, settleKeys } from "../src/ordering/settle-keys.js";
import { freshStorageEachTest } from "./temp-db.js";

const storage = freshStorageEachTest();

// The plan of `statement` (SQLite plans it alike for any arguments).
async function plan(statement: Statement): Promise<string> {
  const rows = await storage().client.execute({
    sql: `EXPLAIN QUERY PLAN ${statement.sql}`,
    args: statement.args ?? {},
  });
  return rows.rows.map((row) => String(row["detail"])).join("\n");
}

const OPEN_KEY = "postel_deliveries_key_open (endpoint_id=? AND ordering_key=? AND status=?)";

test("settling a key finds its head and its next waiting delivery on the open-keyed partial index", async () => {
  const text = await plan(settleKeys(keysOf("keys"), { keys: "[]", now: 0 }));
  expect(text).toContain(`SEARCH h USING COVERING INDEX ${OPEN_KEY}`);
  expect(text).toContain(`SEARCH w USING INDEX ${OPEN_KEY}`);
  expect(text).toContain(
    "SEARCH hk USING COVERING INDEX sqlite_autoindex_postel_held_keys_1 (endpoint_id=? AND ordering_key=?)",
  );
  expect(text).not.toMatch(/\bSCAN (postel_|h\b|w\b|hk\b)/);
});

test("countWaiting reads the open-keyed partial index, never the delivery history", async () => {
  expect(await plan(countWaitingStatement({ cap: 100 }))).toContain(
    "SCAN d USING COVERING INDEX postel_deliveries_key_open",
  );
  expect(await plan(countWaitingStatement({ endpointId: "ep_1", cap: 100 }))).toContain(
    "SEARCH d USING COVERING INDEX postel_deliveries_key_open (endpoint_id=?",
  );
});

test("a page of held keys walks their primary key from the cursor and counts each key's waiting on the partial index", async () => {
  const text = await plan(
    listHeldKeysStatement({ limit: 10, after: { endpointId: "ep_1", orderingKey: "k" } }),
  );
  expect(text).toContain(
    "SEARCH hk USING INDEX sqlite_autoindex_postel_held_keys_1 ((endpoint_id,ordering_key)>(?,?))",
  );
  expect(text).toContain(`SEARCH w USING COVERING INDEX ${OPEN_KEY}`);
  expect(text).not.toContain("TEMP B-TREE");
});

test("fan-out looks for an earlier message of a key on the keyed un-fanned partial index", async () => {
  const text = await plan(freeBlocked("[]", 0));
  expect(text).toContain("SEARCH e USING INDEX postel_messages_unfanned_key (ordering_key=? AND id<?)");
  expect(text).not.toMatch(/\bSCAN (postel_|e\b)/);
});
