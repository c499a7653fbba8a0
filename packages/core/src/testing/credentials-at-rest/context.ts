import { randomBytes } from "node:crypto";
import { describe, test } from "vitest";
import type { Clock } from "../../clock.js";
import type { OutboundOptions } from "../../config/options.js";
import type { CredentialsOptions } from "../../credentials/credentials-options.js";
import type { PostelInstance } from "../../postel.js";
import type { Storage } from "../../storage/storage.js";
import type { VerifyingReceiver } from "./verifying-receiver.js";

/** The groups of the credentials-at-rest suite; each can be skipped with a stated reason. */
export const CREDENTIALS_AT_REST_GROUPS = ["dump", "rotation", "tamper", "migration"] as const;

/** Name of one group of the credentials-at-rest suite. */
export type CredentialsAtRestGroup = (typeof CREDENTIALS_AT_REST_GROUPS)[number];

/** What every group needs. */
export interface AtRestContext {
  /** The running test's storage, as the storage package made it (its rows hold the stored form). */
  storage(): Storage<unknown>;
  /**
   * A Postel on the test's storage with these credentials, private networks allowed; `outbound` adds
   * to the options, `clock` replaces the system clock. Stopped and closed after the test.
   */
  postel(
    credentials: CredentialsOptions,
    outbound?: Partial<OutboundOptions>,
    clock?: Clock,
  ): PostelInstance<Storage<unknown>>;
  /** A verifying receiver on 127.0.0.1, closed after the test. */
  receiver(): Promise<VerifyingReceiver>;
  /** Every byte the database holds at rest; undefined when the storage has none (memory). */
  dump: (() => Promise<Uint8Array>) | undefined;
  skip: Partial<Record<CredentialsAtRestGroup, string>>;
}

/** A fresh data key with an id, as `outbound.credentials.keys` takes it. */
export function newKey(id: string): { id: string; key: Uint8Array } {
  return { id, key: new Uint8Array(randomBytes(32)) };
}

/** Registers one test of a group (skipped, with the reason in its title, when the group is skipped). */
export type AtRestTest = (title: string, fn: () => Promise<void>, timeoutMs?: number) => void;

/** A `describe` block for `name`, its tests skipped with the reason when the wiring skips the group. */
export function group(
  context: AtRestContext,
  name: CredentialsAtRestGroup,
  body: (test: AtRestTest) => void,
  unavailable?: string,
): void {
  const reason = context.skip[name] ?? unavailable;
  describe(name, () => {
    body(
      reason === undefined
        ? (title, fn, timeoutMs) => test(title, fn, timeoutMs)
        : (title, fn) => test.skip(`${title} (skipped: ${reason})`, fn),
    );
  });
}
