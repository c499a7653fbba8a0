import { testEventTests } from "./conformance/test-events.js";
import { traceContextTests } from "./conformance/trace-context.js";
import { directTests } from "./conformance/direct.js";
import { afterEach, beforeEach, describe } from "vitest";
import { ConfigurationError } from "../errors.js";
import type { Storage, TransactionOf } from "../storage/storage.js";
import { auditTests } from "./conformance/audit.js";
import { auditLogTests } from "./conformance/audit-log.js";
import { credentialTests } from "./conformance/credentials.js";
import { CONFORMANCE_GROUPS, type ConformanceContext, type ConformanceGroup } from "./conformance/context.js";
import { contractTests } from "./conformance/contract.js";
import { deliveryQueueTests } from "./conformance/delivery-queue.js";
import { endpointTests } from "./conformance/endpoints.js";
import { enqueueManyTests } from "./conformance/enqueue-many.js";
import { fanoutTests } from "./conformance/fanout.js";
import { healthTests } from "./conformance/health.js";
import { historyTests } from "./conformance/history.js";
import { limitTests } from "./conformance/limits.js";
import { operationsTests } from "./conformance/operations.js";
import { outboxTests } from "./conformance/outbox.js";
import { outcomeTests } from "./conformance/outcomes.js";
import { replayTests } from "./conformance/replay.js";
import { orderingTests } from "./conformance/ordering.js";
import { retentionTests } from "./conformance/retention.js";

export type { ConformanceGroup } from "./conformance/context.js";

/** How a storage package wires itself into the shared conformance suite. */
export interface StorageConformanceOptions<S extends Storage<never> = Storage<unknown>> {
  /** Shown in the top-level `describe` (`"postgres"`, `"sqlite"`, `"memory"`). */
  name: string;
  /** A fresh, empty storage; called before every test. */
  create: () => S | Promise<S>;
  /** Tear down what `create` made (drop the schema, delete the file); runs after every test, before `close()`. */
  destroy?: (storage: S) => Promise<void>;
  /**
   * Run `fn` in a transaction of `storage`, committing when it resolves and rolling back when it
   * throws. When given, the transaction tests run; otherwise they are reported as skipped.
   */
  transaction?: <T>(storage: S, fn: (tx: TransactionOf<S>) => Promise<T>) => Promise<T>;
  /** Groups to skip, each with the reason shown in the skipped tests' titles. */
  skip?: Partial<Record<ConformanceGroup, string>>;
}

/**
 * Register the storage conformance suite (vitest `describe`/`test` blocks) for one `Storage`
 * implementation. Every test gets a fresh storage; time is passed explicitly, nothing sleeps.
 * @example
 * // test/conformance.test.ts of a storage package (see storage-sqlite and storage-postgres)
 * import { runStorageConformance } from "@postel/core/storage/conformance";
 * import { SqliteStorage } from "../src/index.js";
 *
 * runStorageConformance({
 *   name: "sqlite",
 *   create: () => SqliteStorage({ url: `file:${tempFile()}` }),
 *   transaction: async (storage, fn) => {
 *     const tx = await storage.client.transaction("write");
 *     try {
 *       const result = await fn(tx);
 *       await tx.commit();
 *       return result;
 *     } finally {
 *       tx.close();
 *     }
 *   },
 * });
 */
export function runStorageConformance<S extends Storage<never>>(options: StorageConformanceOptions<S>): void {
  const skip = options.skip ?? {};
  const unknown = Object.keys(skip).filter((key) => !(CONFORMANCE_GROUPS as readonly string[]).includes(key));
  if (unknown.length > 0) {
    const known = `use one of: ${CONFORMANCE_GROUPS.join(", ")}`;
    const issues = unknown.map((key) => ({ path: `skip.${key}`, message: `unknown group; ${known}` }));
    throw new ConfigurationError(issues, "runStorageConformance options");
  }

  let current: S | undefined;
  const transaction = options.transaction;
  const context: ConformanceContext = {
    storage: () => {
      if (!current)
        throw new Error("runStorageConformance: no storage; `create()` did not run for this test");
      // The suite only passes back the transaction handles `transaction` gave it.
      return current as unknown as Storage<unknown>;
    },
    transaction: transaction
      ? (fn) => transaction(current!, fn as (tx: TransactionOf<S>) => Promise<never>)
      : undefined,
    skip,
  };

  describe(`storage conformance: ${options.name}`, () => {
    beforeEach(async () => {
      current = await options.create();
    });
    afterEach(async () => {
      const storage = current;
      current = undefined;
      if (!storage) return;
      try {
        await options.destroy?.(storage);
      } finally {
        await storage.close();
      }
    });

    contractTests(context);
    outboxTests(context);
    enqueueManyTests(context);
    fanoutTests(context);
    deliveryQueueTests(context);
    limitTests(context);
    outcomeTests(context);
    directTests(context);
    healthTests(context);
    endpointTests(context);
    auditTests(context);
    replayTests(context);
    historyTests(context);
    operationsTests(context);
    retentionTests(context);
    traceContextTests(context);
    testEventTests(context);
    auditLogTests(context);
    credentialTests(context);
    orderingTests(context);
  });
}
