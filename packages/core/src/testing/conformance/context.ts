import { describe, test } from "vitest";
import type { Storage } from "../../storage/storage.js";

/** The groups of the storage conformance suite; each can be skipped with a stated reason. */
export const CONFORMANCE_GROUPS = [
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
] as const;

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

/** Registers one test of a group (skipped, with the reason in its title, when the group is skipped). */
export type ConformanceTest = (title: string, fn: () => Promise<void>) => void;

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
  const missing = typeof unavailable === "function" ? unavailable : undefined;
  describe(name, () => {
    body(
      reason !== undefined
        ? (title, fn) => test.skip(`${title} (skipped: ${reason})`, fn)
        : missing === undefined
          ? (title, fn) => test(title, fn)
          : (title, fn) =>
              test(title, async ({ skip }) => {
                const why = missing(context.storage());
                if (why !== undefined) skip(`skipped: ${why}`);
                await fn();
              }),
    );
  });
}
