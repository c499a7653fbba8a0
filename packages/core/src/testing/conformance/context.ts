import { describe, test } from "vitest";
import type { StorageCapability } from "../../storage/capabilities.js";
import type { Storage } from "../../storage/storage.js";

/** The groups of the storage conformance suite; each can be skipped with a stated reason. */
export const CONFORMANCE_GROUPS = [
  "contract",
  "enqueue",
  "transactions",
  "transaction-isolation",
  "enqueue-many",
  "enqueue-many-transactions",
  "fanout",
  "claim-due",
  "limits",
  "leases",
  "outcomes",
  "direct",
  "health",
  "health-buckets",
  "release-held",
  "endpoints",
  "audit",
  "replay",
  "history",
  "pagination",
  "stats",
  "stats-cap",
  "recent-attempts",
  "attempt-feed",
  "retention",
  "trace-context",
  "trace-context-transactions",
  "test-events",
  "audit-log",
  "credentials",
  "ordering",
] as const;

/**
 * The capability each group proves: null for the required delivery part (`DeliveryStorage`). A
 * group of a capability the storage lacks is skipped, saying so; the delivery groups always run.
 */
export const GROUP_CAPABILITY: { readonly [G in ConformanceGroup]: StorageCapability | null } = {
  contract: null,
  enqueue: null,
  transactions: null,
  "transaction-isolation": null,
  "enqueue-many": "batchSend",
  "enqueue-many-transactions": "batchSend",
  fanout: null,
  "claim-due": null,
  limits: "limits",
  leases: null,
  outcomes: null,
  direct: "direct",
  health: null,
  "health-buckets": "operations",
  "release-held": null,
  endpoints: null,
  audit: "operations",
  replay: "replay",
  history: "operations",
  pagination: "operations",
  stats: "operations",
  "stats-cap": "operations",
  "recent-attempts": "operations",
  "attempt-feed": "operations",
  retention: "retention",
  "trace-context": null,
  "trace-context-transactions": null,
  "test-events": null,
  "audit-log": "auditLog",
  credentials: "credentials",
  ordering: "ordering",
};

/** Name of one group of the storage conformance suite. */
export type ConformanceGroup = (typeof CONFORMANCE_GROUPS)[number];

/** What every group needs: the fresh storage of the running test and the optional transaction runner. */
export interface ConformanceContext {
  /** The storage created for the running test. */
  storage(): Storage<unknown>;
  /** Runs `fn` in a transaction of the current storage; undefined when the wiring gave none. */
  transaction: (<T>(fn: (tx: unknown) => Promise<T>) => Promise<T>) | undefined;
  skip: Partial<Record<ConformanceGroup, string>>;
}

/** What each test of the suite is given. */
export interface ConformanceTestContext {
  /**
   * The storage's `capability`, for a test of a delivery group that is about an optional verb (an
   * operations listing, `enqueueMany`): on a storage without it, the test stops here and is reported
   * as skipped, saying why. Call it first.
   */
  needs<C extends StorageCapability>(capability: C): NonNullable<Storage<unknown>[C]>;
}

/** Registers one test of a group (skipped, with the reason in its title, when the group is skipped). */
export type ConformanceTest = (title: string, fn: (t: ConformanceTestContext) => Promise<void>) => void;

/**
 * Register a `describe` block for `name`. Its tests are registered as skipped, with the reason in
 * their titles, when the wiring skips the group or when `unavailable` names a missing capability.
 * A capability of the storage itself (known once `create()` made it) is a function of the storage
 * instead: each test is skipped as it starts, with the reason it returns as the skip note.
 */
export function group(
  context: ConformanceContext,
  name: ConformanceGroup,
  body: (test: ConformanceTest) => void,
  unavailable?: string | ((storage: Storage<unknown>) => string | undefined),
): void {
  const reason = context.skip[name] ?? (typeof unavailable === "string" ? unavailable : undefined);
  const lacks = (storage: Storage<unknown>, capability: StorageCapability | null) =>
    capability !== null && storage[capability] === undefined
      ? `the ${storage.name} storage has no ${capability} capability (an optional part of the contract)`
      : undefined;
  const own = typeof unavailable === "function" ? unavailable : undefined;
  const missing = (storage: Storage<unknown>) => lacks(storage, GROUP_CAPABILITY[name]) ?? own?.(storage);
  describe(name, () => {
    body(
      reason !== undefined
        ? (title) => test.skip(`${title} (skipped: ${reason})`, () => {})
        : (title, fn) =>
            test(title, async ({ skip }) => {
              const storage = context.storage();
              const why = missing(storage);
              if (why !== undefined) skip(`skipped: ${why}`);
              await fn({
                needs: (capability) => {
                  const lacking = lacks(storage, capability);
                  if (lacking !== undefined) skip(`skipped: ${lacking}`);
                  return storage[capability]!;
                },
              });
            }),
    );
  });
}
