import { describe, expect, test } from "vitest";
import {
  arrayMapper,
  type ColumnReader,
  columnsOf,
  DELIVERY_ROW,
  ENDPOINT_ROW,
  MESSAGE_ROW,
  type RowTable,
  rowMapper,
} from "./row-mapping.js";

// As the two SQL storages read their drivers' values.
const postgresJs: ColumnReader = { text: (v) => v as string, number: Number, json: (v) => v };
const libsql: ColumnReader = { text: String, number: Number, json: (v) => JSON.parse(String(v)) };

const messageRow = {
  id: "msg_1",
  type: "order.created",
  payload: '{"a":1}',
  tenant_id: null,
  idempotency_key: "k",
  status: "pending",
  created_at: "1700000000000",
  expires_at: null,
  fanned_out_at: 1700000000001n,
  finished_at: null,
  trace_context: null,
  test_endpoint_id: "ep_1",
};

describe("row mapping", () => {
  test("a message row becomes its record: integers from strings and bigints, nulls kept, an optional field only when a string", () => {
    const message = rowMapper(MESSAGE_ROW, postgresJs)(messageRow);
    expect(message).toEqual({
      id: "msg_1",
      type: "order.created",
      payload: '{"a":1}',
      tenantId: null,
      idempotencyKey: "k",
      status: "pending",
      createdAt: 1700000000000,
      expiresAt: null,
      fannedOutAt: 1700000000001,
      finishedAt: null,
      testEndpointId: "ep_1",
    });
    expect("traceContext" in message).toBe(false);
    // The keys in the order the storages always built them, so a record serialises as before.
    expect(Object.keys(message)).toEqual([
      "id",
      "type",
      "payload",
      "tenantId",
      "idempotencyKey",
      "createdAt",
      "expiresAt",
      "status",
      "fannedOutAt",
      "finishedAt",
      "testEndpointId",
    ]);
  });

  test("a prefix reads a joined row's columns under their prefixed names", () => {
    const joined = Object.fromEntries(Object.entries(messageRow).map(([k, v]) => [`m_${k}`, v]));
    const toMessage = rowMapper(MESSAGE_ROW, postgresJs, "m_");
    expect(toMessage({ ...joined, id: "dlv_1" })).toEqual(rowMapper(MESSAGE_ROW, postgresJs)(messageRow));
  });

  test("an array mapper reads the columns by position, in the table's order", () => {
    const values = columnsOf(MESSAGE_ROW).map((column) => messageRow[column as keyof typeof messageRow]);
    expect(arrayMapper(MESSAGE_ROW, libsql)(values)).toEqual(rowMapper(MESSAGE_ROW, libsql)(messageRow));
  });

  test("JSON columns go through the reader; a nullable one stays null", () => {
    const row = {
      id: "ep_1",
      url: "https://example.com",
      description: null,
      types: '["order.*"]',
      filter: null,
      filter_fn: null,
      transform: null,
      headers: '{"x":"1"}',
      retry_policy: '{"maxRetries":3}',
      circuit_breaker: null,
      auto_disable: null,
      max_in_flight: 5n,
      rate_limit: 0.5,
      tenant_id: "t",
      metadata: "{}",
      state: "active",
      circuit_open_until: null,
      disabled_reason: null,
      created_at: 1,
      updated_at: "2",
      secrets: '[{"secret":"s","createdAt":1,"expiresAt":null}]',
    };
    expect(rowMapper(ENDPOINT_ROW, libsql)(row)).toMatchObject({
      types: ["order.*"],
      filter: null,
      headers: { x: "1" },
      retryPolicy: { maxRetries: 3 },
      maxInFlight: 5,
      rateLimit: 0.5,
      updatedAt: 2,
      secrets: [{ secret: "s", createdAt: 1, expiresAt: null }],
    });
  });

  test("columnsOf lists a table's columns in its order", () => {
    expect(columnsOf(DELIVERY_ROW)).toEqual([
      "id",
      "message_id",
      "endpoint_id",
      "webhook_id",
      "created_at",
      "status",
      "retries_used",
      "attempts_made",
      "next_attempt_at",
      "lease_token",
      "lease_owner",
      "last_error",
      "updated_at",
      "ordering_key",
    ]);
  });

  test("a table's kinds are checked against its record's field types", () => {
    const table: RowTable<{ at: number; note?: string }> = {
      // @ts-expect-error a number field is read as a number, not as text
      at: { column: "at", kind: "text" },
      note: { column: "note", kind: "optional-text" },
    };
    expect(columnsOf(table)).toEqual(["at", "note"]);
  });
});
