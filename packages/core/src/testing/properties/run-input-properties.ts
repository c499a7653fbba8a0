import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ExponentialBackoff } from "../../backoff.js";
import { ManualClock } from "../../clock.js";
import { isPostelError } from "../../errors.js";
import type { SendEvent } from "../../outbound/types.js";
import { Postel, type PostelInstance } from "../../postel.js";
import type { Storage, TransactionOf } from "../../storage/storage.js";
import { T0 } from "../conformance/fixtures.js";
import { badEndpointInputs } from "./bad-endpoints.js";
import { badEvents, PROPERTY_MAX_PAYLOAD_BYTES } from "./bad-events.js";
import { REGISTERED_NAME } from "./bad-policy-fields.js";
import {
  type Arb,
  type BadInput,
  type Fc,
  filled,
  loadFastCheck,
  unstorableText,
  wrongType,
} from "./bad-values.js";
import {
  DEFAULT_FIGURES_DIR,
  figuresFile,
  newFigures,
  type PropertyFigures,
  reportFigures,
} from "./figures.js";
import { expectRefusal } from "./refusal.js";
import { propertySettings } from "./settings.js";
import { changedParts, snapshotStorage, type StorageSnapshot } from "./snapshot.js";

/** How a storage package wires itself into the shared input property suite. */
export interface InputPropertyOptions<S extends Storage<never> = Storage<unknown>> {
  /** Shown in the top-level `describe` and names the figures file (`"postgres"`, `"sqlite"`, `"memory"`). */
  name: string;
  /** A fresh, empty, migrated storage; called once for the whole suite. */
  create: () => S | Promise<S>;
  /** Tear down what `create` made; runs after the suite, before `close()`. */
  destroy?: (storage: S) => Promise<void>;
  /** Run `fn` in a transaction of `storage` (as in `runStorageConformance`); half the bad sends then use `{ tx }`. */
  transaction?: <T>(storage: S, fn: (tx: TransactionOf<S>) => Promise<T>) => Promise<T>;
  /**
   * Every row of every table the storage owns, keyed by table. Compared before and after each bad
   * input on top of what the `Storage` interface reads; without it, only those reads are compared.
   */
  tables?: (storage: S) => Promise<Record<string, unknown>>;
  /** Runs per property (default 200; `FC_RUNS` overrides). */
  numRuns?: number;
  /** fast-check seed (default 14; `FC_SEED` overrides). */
  seed?: number;
  /** Where the figures JSON goes (default `.generated/property-figures/` in the working directory); false for none. */
  figuresDir?: string | false;
}

interface Running {
  fc: Fc;
  storage: Storage<unknown>;
  postel: PostelInstance<Storage<unknown>>;
  /** Allows private networks: writes the seed and the controls. */
  lenient: PostelInstance<Storage<unknown>>;
  snapshot: () => Promise<StorageSnapshot>;
  send: (event: unknown, inTransaction: boolean) => Promise<unknown>;
  sendBatch: (events: unknown[], inTransaction: boolean) => Promise<unknown>;
  endpointId: string;
  deletedId: string;
  messageId: string;
}

const PROPERTY_TIMEOUT_MS = 300_000;

/**
 * Register the input property suite (vitest `describe`/`test` blocks) for one `Storage`: fast-check
 * generates bad input for `send`, `sendBatch` (one bad event among good ones), `endpoints.create`
 * and `endpoints.update` (wrong types, NUL and lone surrogates, values past every bound, bad URLs and
 * private addresses, bad event types and durations, unserialisable payloads, bad limits, short
 * secrets, unknown fields) and every one must be refused with a `PostelError` of the expected `code`, leaving every table as it was. Needs
 * fast-check installed. Prints one line of figures per property and writes them to a JSON file.
 * @example
 * // test/input-properties.test.ts of a storage package
 * import { runInputProperties } from "@postel/core/testing";
 * import { SqliteStorage } from "../src/index.js";
 *
 * runInputProperties({ name: "sqlite", create: () => SqliteStorage({ url: `file:${tempFile()}` }) });
 */
export function runInputProperties<S extends Storage<never>>(options: InputPropertyOptions<S>): void {
  const suite = `input properties: ${options.name}`;
  const settings = propertySettings(options, 200);
  const figures: PropertyFigures[] = [];
  let storage: S | undefined;
  let running: Running | undefined;
  const current = (): Running => {
    if (!running) throw new Error("runInputProperties: the suite's beforeAll did not finish");
    return running;
  };

  /** Runs one property over `arb`, counting into a new row of figures. */
  async function check<T>(
    property: string,
    arb: (run: Running) => Arb<T>,
    body: (run: Running, value: T, f: PropertyFigures) => Promise<void>,
  ) {
    const run = current();
    const f = newFigures(suite, property, settings);
    figures.push(f);
    const started = performance.now();
    try {
      await run.fc.assert(
        run.fc.asyncProperty(arb(run), (value) => body(run, value, f)),
        settings,
      );
    } finally {
      f.ms = performance.now() - started;
    }
  }

  describe(suite, () => {
    beforeAll(async () => {
      const fc = await loadFastCheck();
      storage = await options.create();
      running = await seed(fc, storage, options);
    });
    afterAll(async () => {
      reportFigures(figures, figuresFile(suite), options.figuresDir ?? DEFAULT_FIGURES_DIR);
      const created = storage;
      storage = undefined;
      running = undefined;
      if (!created) return;
      try {
        await options.destroy?.(created);
      } finally {
        await created.close();
      }
    });

    test(
      "send refuses every generated bad event with a coded error and writes nothing",
      () =>
        check(
          "send",
          (run) => run.fc.tuple(badEvents(run.fc), run.fc.boolean()),
          (run, [bad, inTransaction], f) =>
            expectRefusal(bad, f, run.snapshot, () => run.send(bad.value, inTransaction)),
        ),
      PROPERTY_TIMEOUT_MS,
    );

    test(
      "sendBatch refuses a batch holding one generated bad event among good ones, naming its index, and writes nothing",
      () =>
        check(
          "sendBatch",
          (run) =>
            run.fc.record({
              bad: badEvents(run.fc),
              before: run.fc.nat({ max: 4 }),
              after: run.fc.nat({ max: 4 }),
              inTransaction: run.fc.boolean(),
            }),
          (run, { bad, before, after, inTransaction }, f) => {
            const good = (i: number) => ({
              type: "order.created",
              data: { i },
              idempotencyKey: `batch-${i}`,
            });
            const events = [
              ...Array.from({ length: before }, (_, i) => good(i)),
              bad.value,
              ...Array.from({ length: after }, (_, i) => good(before + 1 + i)),
            ];
            return expectRefusal(bad, f, run.snapshot, () =>
              run.sendBatch(events, inTransaction).catch((error: unknown) => {
                // A coded refusal must name the bad event's index; anything else fails the property.
                if (isPostelError(error) && !error.message.startsWith(`events[${before}]`)) {
                  throw new Error(`${error.code} does not name events[${before}]: ${error.message}`);
                }
                throw error;
              }),
            );
          },
        ),
      PROPERTY_TIMEOUT_MS,
    );

    test(
      "endpoints.create refuses every generated bad input with a coded error and writes nothing",
      () =>
        check(
          "endpoints.create",
          (run) => badEndpointInputs(run.fc, "create"),
          (run, bad, f) =>
            expectRefusal(bad, f, run.snapshot, () =>
              run.postel.outbound.endpoints.create(bad.value as never),
            ),
        ),
      PROPERTY_TIMEOUT_MS,
    );

    test(
      "endpoints.update refuses every generated bad input or id with a coded error and writes nothing",
      () =>
        check(
          "endpoints.update",
          (run) =>
            run.fc.oneof(
              {
                arbitrary: badEndpointInputs(run.fc, "update").map((bad) => ({ id: run.endpointId, bad })),
                weight: 4,
              },
              { arbitrary: badIds(run), weight: 1 },
            ),
          (run, { id, bad }, f) =>
            expectRefusal(bad, f, run.snapshot, () =>
              run.postel.outbound.endpoints.update(id as string, bad.value as never),
            ),
        ),
      PROPERTY_TIMEOUT_MS,
    );

    // Controls: the same harness sees valid calls write, so the properties above can fail.
    test("a valid send and a valid create do write (the snapshot sees writes)", async () => {
      const run = current();
      for (const call of [
        () => run.send({ type: "order.created", data: { id: 2 } }, false),
        () => run.lenient.outbound.endpoints.create({ url: "http://127.0.0.1:9/control" }),
      ]) {
        const before = await run.snapshot();
        await call();
        expect(changedParts(before, await run.snapshot())).not.toEqual([]);
      }
    });
  });
}

/** Ids `update` must answer ENDPOINT_NOT_FOUND for, with a valid input. */
function badIds(run: Running): Arb<{ id: unknown; bad: BadInput }> {
  const { fc } = run;
  return fc
    .oneof(
      wrongType(fc, ["string"]),
      fc.constantFrom(
        "",
        "ep_missing",
        "' OR 1=1 --",
        "%",
        "*",
        run.deletedId,
        run.messageId,
        filled("e", 10_000),
      ),
      unstorableText(fc, fc.constant(run.endpointId)),
    )
    .map((id) => ({
      id,
      bad: {
        what: "an id that names no live endpoint",
        value: { description: "changed" },
        codes: ["ENDPOINT_NOT_FOUND"],
      },
    }));
}

/**
 * Fills the storage with one of everything a bad input could disturb (a live endpoint, a deleted
 * one, a message with an idempotency key) through a Postel that allows private networks, and
 * returns a strict Postel (public URLs only, small payload limit, one registered name of each kind).
 */
async function seed<S extends Storage<never>>(
  fc: Fc,
  created: S,
  options: InputPropertyOptions<S>,
): Promise<Running> {
  const storage = created as unknown as Storage<unknown>;
  const clock = new ManualClock(T0);
  const lenient = Postel({ clock, outbound: { storage, http: { allowPrivateNetworks: true } } });
  const endpoint = await lenient.outbound.endpoints.create({
    url: "http://127.0.0.1:9/seed",
    types: ["order.*"],
    description: "seeded",
    metadata: { team: "payments" },
    tenantId: "t1",
  });
  const deleted = await lenient.outbound.endpoints.create({ url: "http://127.0.0.1:9/deleted" });
  await lenient.outbound.endpoints.delete(deleted.id);
  const message = await lenient.outbound.send({
    type: "order.created",
    data: { id: 1 },
    idempotencyKey: "seeded-key",
    tenantId: "t1",
  });
  const postel = Postel({
    clock,
    outbound: {
      storage,
      maxPayloadBytes: PROPERTY_MAX_PAYLOAD_BYTES,
      filters: { [REGISTERED_NAME]: () => true },
      transforms: { [REGISTERED_NAME]: (event) => event.data },
      retryPolicies: { [REGISTERED_NAME]: ExponentialBackoff() },
    },
  });
  const { transaction, tables } = options;
  return {
    fc,
    storage,
    postel,
    lenient,
    snapshot: () => snapshotStorage(storage, tables && (() => tables(created))),
    send: (event, inTransaction) =>
      transaction && inTransaction
        ? transaction(created, (tx) => postel.outbound.send(event as SendEvent, { tx: tx as never }))
        : postel.outbound.send(event as SendEvent),
    sendBatch: (events, inTransaction) =>
      transaction && inTransaction
        ? transaction(created, (tx) => postel.outbound.sendBatch(events as SendEvent[], { tx: tx as never }))
        : postel.outbound.sendBatch(events as SendEvent[]),
    endpointId: endpoint.id,
    deletedId: deleted.id,
    messageId: message.id,
  };
}
