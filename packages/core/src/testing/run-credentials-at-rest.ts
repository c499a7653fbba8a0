import { afterEach, beforeEach, describe } from "vitest";
import type { OutboundOptions } from "../config/options.js";
import { ConfigurationError } from "../errors.js";
import { Postel, type PostelInstance } from "../postel.js";
import type { Storage } from "../storage/storage.js";
import {
  type AtRestContext,
  CREDENTIALS_AT_REST_GROUPS,
  type CredentialsAtRestGroup,
} from "./credentials-at-rest/context.js";
import { dumpTests } from "./credentials-at-rest/dump.js";
import { migrationTests } from "./credentials-at-rest/migration.js";
import { rotationTests } from "./credentials-at-rest/rotation.js";
import { tamperTests } from "./credentials-at-rest/tamper.js";
import { startVerifyingReceiver, type VerifyingReceiver } from "./credentials-at-rest/verifying-receiver.js";

export type { CredentialsAtRestGroup } from "./credentials-at-rest/context.js";

/** How a storage package wires itself into the credentials-at-rest suite. */
export interface CredentialsAtRestOptions<S extends Storage<never> = Storage<unknown>> {
  /** Shown in the top-level `describe`. */
  name: string;
  /** A fresh, empty, migrated storage; called before every test. */
  create: () => S | Promise<S>;
  /**
   * Every byte the database holds at rest once the test has written it: `pg_dump` of the database,
   * or the SQLite file (and its WAL) after closing the storage. Leave it out for a storage that
   * keeps nothing at rest; the dump tests are then skipped.
   */
  dump?: (storage: S) => Promise<Uint8Array>;
  /** Tear down what `create` made; runs after every test, once its Postel instances are closed. */
  destroy?: (storage: S) => Promise<void>;
  /** Groups to skip, each with the reason shown in the skipped tests' titles. */
  skip?: Partial<Record<CredentialsAtRestGroup, string>>;
}

/**
 * Register the credentials-at-rest suite (issue 28's proofs) for one `Storage`: a dump of 1,000
 * endpoints holds none of their secrets or header values in any encoding; a key rotation under a
 * running drain loses nothing and sends again only after an attempt that got no answer; a moved or
 * altered ciphertext is refused; plain-text rows are read, then encrypted by `reencrypt()`. Real
 * HTTP, real signatures, a fresh storage per test.
 * @example
 * runCredentialsAtRest({ name: "sqlite", create, dump: async (storage) => { await storage.close(); return readFile(path); } });
 */
export function runCredentialsAtRest<S extends Storage<never>>(options: CredentialsAtRestOptions<S>): void {
  const skip = options.skip ?? {};
  const unknown = Object.keys(skip).filter(
    (key) => !(CREDENTIALS_AT_REST_GROUPS as readonly string[]).includes(key),
  );
  if (unknown.length > 0) {
    const known = `use one of: ${CREDENTIALS_AT_REST_GROUPS.join(", ")}`;
    const issues = unknown.map((key) => ({ path: `skip.${key}`, message: `unknown group; ${known}` }));
    throw new ConfigurationError(issues, "runCredentialsAtRest options");
  }

  let storage: S | undefined;
  let postels: PostelInstance<Storage<unknown>>[] = [];
  let receiver: Promise<VerifyingReceiver> | undefined;
  const current = (): S => {
    if (!storage) throw new Error("runCredentialsAtRest: no storage; `create()` did not run for this test");
    return storage;
  };
  const { dump } = options;
  const context: AtRestContext = {
    storage: () => current() as unknown as Storage<unknown>,
    postel(credentials, outbound: Partial<OutboundOptions> = {}, clock) {
      const postel = Postel({
        ...(clock === undefined ? {} : { clock }),
        outbound: {
          storage: current() as unknown as Storage<unknown>,
          http: { allowPrivateNetworks: true, timeout: "10s" },
          ...outbound,
          credentials,
        },
      });
      postels.push(postel);
      return postel;
    },
    receiver: () => {
      receiver ??= startVerifyingReceiver();
      return receiver;
    },
    dump: dump === undefined ? undefined : () => dump(current()),
    skip,
  };

  describe(`credentials at rest: ${options.name}`, () => {
    beforeEach(async () => {
      storage = await options.create();
    });
    afterEach(async () => {
      const running = postels;
      const made = storage;
      postels = [];
      storage = undefined;
      await Promise.all(running.map((postel) => postel.stop()));
      await (await receiver)?.close();
      receiver = undefined;
      // Closing a Postel closes its storage: every instance here shares the test's one.
      await Promise.all(running.map((postel) => postel.close()));
      if (made) {
        try {
          await options.destroy?.(made);
        } finally {
          await made.close();
        }
      }
    });

    dumpTests(context);
    rotationTests(context);
    tamperTests(context);
    migrationTests(context);
  });
}
