import * as v from "valibot";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { isPostelError, type PostelError } from "../errors.js";
import { defineEvents } from "../outbound/catalog.js";
import type { SendEvent, SendResult } from "../outbound/types.js";
import { Postel } from "../postel.js";
import type { Storage, TransactionOf } from "../storage/storage.js";

/** Rows in the storage's tables, read straight from the database (not through Postel). */
export interface CatalogWriteCounts {
  messages: number;
  deliveries: number;
}

/**
 * How a storage package wires itself into the shared catalog write suite. Besides Postel's tables, the
 * storage's database holds one table of the app's own (any columns, keyed by a text id) that the
 * suite writes in the same transactions as its sends.
 */
export interface CatalogWriteConformanceOptions<
  S extends Storage<never> = Storage<unknown>,
  Tx extends TransactionOf<S> = TransactionOf<S>,
> {
  /** Shown in the top-level `describe` (`"postgres"`, `"sqlite"`). */
  name: string;
  /** A fresh, migrated storage, with Postel's tables and the app's table empty; called before every test. */
  create: () => S | Promise<S>;
  /** Tear down what `create` made; runs after every test, before the suite's Postel (and so `storage`) is closed. */
  destroy?: (storage: S) => Promise<void>;
  /** Run `fn` in a transaction of `storage`, committing when it resolves and rolling back (and rethrowing) when it throws. */
  transaction: <T>(storage: S, fn: (tx: Tx) => Promise<T>) => Promise<T>;
  /** Rows of messages and deliveries, read with SQL of the test's own: through `tx` when given (still open), else outside any. */
  counts: (storage: S, tx?: Tx) => Promise<CatalogWriteCounts>;
  /** The payload column of message `id`, as the database holds it (JSON text). */
  storedPayload: (storage: S, id: string) => Promise<string>;
  /** Insert a row with `id` into the app's table, on `tx`. */
  insertAppRow: (tx: Tx, id: string) => Promise<void>;
  /** The ids in the app's table, in order. */
  appRows: (storage: S) => Promise<string[]>;
}

/** The suite's three schemas: a plain one, one whose output differs from its input, an asynchronous one. */
const order = v.object({ id: v.string(), total: v.number() });
const renamedSku = v.object({ sku: v.pipe(v.string(), v.toUpperCase()) });
/** Resolves later, as a check that looks something up would: send() must await it before writing. */
const customer = v.pipeAsync(
  v.object({ id: v.string() }),
  v.checkAsync(async ({ id }) => id.startsWith("cus_"), "must be a customer id (cus_...)"),
);

const events = defineEvents({
  "order.created": { schema: order, description: "An order was placed.", examples: [{ id: "o1", total: 1 }] },
  "sku.renamed": { schema: renamedSku, description: "A product's SKU changed.", examples: [{ sku: "ab-1" }] },
  "customer.changed": { schema: customer, description: "A customer changed.", examples: [{ id: "cus_1" }] },
});

/** send() and sendBatch() without the catalog's compile-time types, to pass what it refuses. */
interface UntypedOutbound {
  send(event: SendEvent, options?: { tx?: unknown }): Promise<SendResult>;
  sendBatch(events: SendEvent[], options?: { tx?: unknown }): Promise<SendResult[]>;
}

function catalogPostel(storage: Storage<unknown>) {
  return Postel({ outbound: { storage, events } });
}

/** What one test opened, torn down after it. */
interface Running<S> {
  storage: S;
  postel: ReturnType<typeof catalogPostel>;
}

/** The PostelError `promise` rejects with; fails the test if it resolves or rejects with anything else. */
async function refusal(promise: Promise<unknown>): Promise<PostelError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isPostelError(error), `expected a PostelError, got ${String(error)}`).toBe(true);
  return error as PostelError;
}

/** What a caller that catches the refusal got: a PostelError of `code` whose message matches `message`. */
function expectCaught(caught: unknown, code: string, message: RegExp): void {
  expect(isPostelError(caught), `expected a PostelError, got ${String(caught)}`).toBe(true);
  expect((caught as PostelError).code).toBe(code);
  expect((caught as PostelError).message).toMatch(message);
}

const BAD_TOTAL: SendEvent = { type: "order.created", data: { id: "ord_bad", total: "12" } };
const UNDECLARED: SendEvent = { type: "order.creatd", data: { id: "ord_x", total: 1 } };
const NOT_A_CUSTOMER: SendEvent = { type: "customer.changed", data: { id: "ord_1" } };

function batchWithBadSecond(): SendEvent[] {
  return [
    { type: "order.created", data: { id: "ord_a", total: 1 } },
    { type: "order.created", data: { id: "ord_b", total: "2" } },
    { type: "order.created", data: { id: "ord_c", total: 3 } },
  ];
}

/**
 * Register the catalog write suite (vitest `describe`/`test` blocks) for one `Storage`: the event
 * catalog (`defineEvents`: a plain, a transforming and an asynchronous schema) refuses an undeclared
 * type or bad data in `send()`/`sendBatch()` before any storage call, so a refused event writes
 * nothing, in or out of the caller's transaction, and a caller that catches the refusal can still
 * commit its transaction. Controls show what is accepted is written (the schema's output, as
 * stored). Every test gets a fresh storage holding one message already, so "unchanged" is not just
 * "still empty"; rows are read with the storage's own SQL, not through Postel.
 * @example
 * // test/catalog-writes.test.ts of a storage package (see storage-sqlite and storage-postgres)
 * import { runCatalogWriteConformance } from "@postel/core/testing";
 *
 * runCatalogWriteConformance({
 *   name: "sqlite",
 *   create: async () => { ... }, // a migrated storage on a new file, with `CREATE TABLE app_orders (id TEXT PRIMARY KEY)`
 *   transaction: (storage, fn) => { ... }, // as in runStorageConformance
 *   counts: async (storage, tx) => { ... }, // SELECT count(*) ... FROM postel_messages / postel_deliveries
 *   storedPayload: async (storage, id) => { ... },
 *   insertAppRow: async (tx, id) => { await tx.execute({ sql: "INSERT INTO app_orders (id) VALUES (?)", args: [id] }); },
 *   appRows: async (storage) => { ... }, // SELECT id FROM app_orders ORDER BY id
 * });
 */
export function runCatalogWriteConformance<
  S extends Storage<never>,
  Tx extends TransactionOf<S> = TransactionOf<S>,
>(options: CatalogWriteConformanceOptions<S, Tx>): void {
  let current: Running<S> | undefined;
  const run = (): Running<S> => {
    if (!current)
      throw new Error("runCatalogWriteConformance: no storage; `create()` did not run for this test");
    return current;
  };
  /** The catalog-typed outbound, for the controls. */
  const typed = () => run().postel.outbound;
  const outbound = () => run().postel.outbound as unknown as UntypedOutbound;
  const counts = (tx?: Tx) => options.counts(run().storage, tx);
  const storedPayload = (id: string) => options.storedPayload(run().storage, id);
  const appRows = () => options.appRows(run().storage);
  const insertAppRow = options.insertAppRow;
  const inTransaction = <T>(fn: (tx: Tx) => Promise<T>) => options.transaction(run().storage, fn);

  /**
   * The caller's transaction writes the app's row "ord_1", then runs `send` on it, catching what it
   * throws, and commits. Resolves to what was caught (undefined when `send` resolved).
   */
  const caughtThenCommitted = async (send: (tx: Tx) => Promise<unknown>): Promise<unknown> => {
    let caught: unknown;
    await inTransaction(async (tx) => {
      await insertAppRow(tx, "ord_1");
      caught = await send(tx).then(
        () => undefined,
        (e: unknown) => e,
      );
    });
    return caught;
  };
  /** As `caughtThenCommitted`, but `send`'s error propagates and rolls the transaction back: the PostelError it rejects with. */
  const propagatedRolledBack = (send: (tx: Tx) => Promise<unknown>): Promise<PostelError> =>
    refusal(
      inTransaction(async (tx) => {
        await insertAppRow(tx, "ord_1");
        await send(tx);
      }),
    );
  /** Postel's tables hold `added` messages more than `before` and as many deliveries; the app's table exactly `app`, when given. */
  const expectTables = async (before: CatalogWriteCounts, added: number, app?: string[]): Promise<void> => {
    if (app) expect(await appRows()).toEqual(app);
    expect(await counts()).toEqual({ ...before, messages: before.messages + added });
  };

  describe(`catalog write conformance: ${options.name}`, () => {
    beforeEach(async () => {
      const storage = await options.create();
      // The suite only hands the storage to Postel, which accepts any storage.
      current = { storage, postel: catalogPostel(storage as unknown as Storage<unknown>) };
      // One message already there, so "unchanged" is not just "still empty".
      await typed().send({ type: "order.created", data: { id: "ord_seed", total: 1 } });
    });
    afterEach(async () => {
      const running = current;
      current = undefined;
      if (!running) return;
      try {
        await options.destroy?.(running.storage);
      } finally {
        await running.postel.close();
      }
    });

    describe("send() outside a transaction", () => {
      test("an undeclared type is refused with UNKNOWN_EVENT_TYPE and writes nothing", async () => {
        const before = await counts();
        const error = await refusal(outbound().send(UNDECLARED));
        expect(error.code).toBe("UNKNOWN_EVENT_TYPE");
        expect(error.message).toContain('"order.creatd" is not in the event catalog');
        await expectTables(before, 0);
      });

      test("invalid data is refused with INVALID_EVENT_DATA naming the type and path, and writes nothing", async () => {
        const before = await counts();
        const { code, message } = await refusal(outbound().send(BAD_TOTAL));
        expect(code).toBe("INVALID_EVENT_DATA");
        expect(message).toContain('Event data does not match the schema of "order.created"');
        expect(message).toMatch(/ {2}- data\.total: /);
        await expectTables(before, 0);
      });

      test("control: a valid event is written (messages +1)", async () => {
        const before = await counts();
        const { id } = await typed().send({ type: "order.created", data: { id: "ord_ok", total: 5 } });
        await expectTables(before, 1);
        expect(JSON.parse(await storedPayload(id))).toEqual({ id: "ord_ok", total: 5 });
      });
    });

    describe("send() inside the caller's transaction", () => {
      test("the caller catches the refusal; its transaction commits with its own rows, postel unchanged", async () => {
        const before = await counts();
        let caught: unknown;
        await inTransaction(async (tx) => {
          await insertAppRow(tx, "ord_1");
          caught = await outbound()
            .send(BAD_TOTAL, { tx })
            .catch((e: unknown) => e);
          // Nothing ran on the transaction for the refused event, so it is not aborted: it keeps
          // working, and sees no new message.
          await insertAppRow(tx, "ord_2");
          const undeclared = await outbound()
            .send(UNDECLARED, { tx })
            .catch((e: unknown) => e);
          expect(isPostelError(undeclared) && undeclared.code).toBe("UNKNOWN_EVENT_TYPE");
          expect(await counts(tx)).toEqual(before);
        });
        expectCaught(caught, "INVALID_EVENT_DATA", /"order\.created"[\s\S]* {2}- data\.total: /);
        await expectTables(before, 0, ["ord_1", "ord_2"]);
      });

      test("the caller lets the refusal propagate: the transaction rolls back, no app row, postel unchanged", async () => {
        const before = await counts();
        const error = await propagatedRolledBack((tx) => outbound().send(BAD_TOTAL, { tx }));
        expect(error.code).toBe("INVALID_EVENT_DATA");
        expect(error.message).toContain("data.total");
        await expectTables(before, 0, []);
      });

      test("control: a valid event in the same transaction is written with the app's row (messages +1)", async () => {
        const before = await counts();
        const valid = { type: "order.created", data: { id: "ord_1", total: 1250 } } as const;
        expect(await caughtThenCommitted((tx) => typed().send(valid, { tx }))).toBeUndefined();
        await expectTables(before, 1, ["ord_1"]);
      });
    });

    describe("sendBatch()", () => {
      test("outside a transaction: events[1] of 3 invalid is refused and none of the 3 is written", async () => {
        const before = await counts();
        const error = await refusal(outbound().sendBatch(batchWithBadSecond()));
        expect(error.code).toBe("INVALID_EVENT_DATA");
        expect(error.message).toMatch(
          /^events\[1\]: Event data does not match the schema of "order\.created"/,
        );
        expect(error.message).toContain("data.total");
        await expectTables(before, 0);
      });

      test("inside a transaction: events[1] of 3 invalid is refused, the caller commits, none of the 3 is written", async () => {
        const before = await counts();
        const caught = await caughtThenCommitted((tx) => outbound().sendBatch(batchWithBadSecond(), { tx }));
        expectCaught(caught, "INVALID_EVENT_DATA", /^events\[1\]: /);
        await expectTables(before, 0, ["ord_1"]);
      });

      test("inside a transaction that lets the refusal propagate: rolled back, none written", async () => {
        const before = await counts();
        const error = await propagatedRolledBack((tx) => outbound().sendBatch(batchWithBadSecond(), { tx }));
        expect(error.message).toMatch(/^events\[1\]: /);
        await expectTables(before, 0, []);
      });

      test("control: a valid batch of 3 writes 3, outside and inside a transaction", async () => {
        const before = await counts();
        const valid = (prefix: string): SendEvent[] =>
          [1, 2, 3].map((n) => ({ type: "order.created", data: { id: `${prefix}_${n}`, total: n } }));
        expect(await outbound().sendBatch(valid("out"))).toHaveLength(3);
        await expectTables(before, 3);
        expect(await caughtThenCommitted((tx) => outbound().sendBatch(valid("in"), { tx }))).toBeUndefined();
        await expectTables(before, 6, ["ord_1"]);
      });
    });

    describe("the schema's output is what is stored", () => {
      test("a transforming schema: the payload column (text) holds the transformed data", async () => {
        const { id } = await typed().send({ type: "sku.renamed", data: { sku: "ab-1" } });
        expect(await storedPayload(id)).toBe('{"sku":"AB-1"}');
        const [inTx] = await inTransaction((tx) =>
          outbound().sendBatch(
            [
              { type: "sku.renamed", data: { sku: "cd-2" } },
              { type: "order.created", data: { id: "o", total: 1 } },
            ],
            { tx },
          ),
        );
        expect(JSON.parse(await storedPayload((inTx as SendResult).id))).toEqual({ sku: "CD-2" });
      });
    });

    describe("an asynchronous schema", () => {
      test("refusing data writes nothing, outside and inside a transaction and in a batch", async () => {
        const before = await counts();
        const outside = await refusal(outbound().send(NOT_A_CUSTOMER));
        const caught = await caughtThenCommitted((tx) => outbound().send(NOT_A_CUSTOMER, { tx }));
        const batch = await refusal(
          outbound().sendBatch([
            { type: "customer.changed", data: { id: "cus_1" } },
            NOT_A_CUSTOMER,
            { type: "customer.changed", data: { id: "cus_3" } },
          ]),
        );
        expect(outside.code).toBe("INVALID_EVENT_DATA");
        expect(outside.message).toContain('Event data does not match the schema of "customer.changed"');
        expect(outside.message).toContain("  - data: must be a customer id (cus_...)");
        expect(isPostelError(caught) && caught.code).toBe("INVALID_EVENT_DATA");
        expect(batch.message).toMatch(
          /^events\[1\]: Event data does not match the schema of "customer\.changed"/,
        );
        await expectTables(before, 0, ["ord_1"]);
      });

      test("control: data it accepts is awaited, then written", async () => {
        const before = await counts();
        const { id } = await typed().send({ type: "customer.changed", data: { id: "cus_9" } });
        await expectTables(before, 1);
        expect(JSON.parse(await storedPayload(id))).toEqual({ id: "cus_9" });
      });
    });
  });
}
