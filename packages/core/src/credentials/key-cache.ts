import { createSecretKey, type KeyObject } from "node:crypto";
import { CredentialError } from "./credential-error.js";
import type { Keyring } from "./credentials-options.js";
import { KEY_ID } from "./sealed-value.js";

/**
 * The keyring's keys, each asked for once per process (a KMS unwraps a data key once) and kept as a
 * `KeyObject`. Concurrent reads of one id share one request; a failed request is not kept, so the
 * next read asks again.
 */
export class KeyCache {
  readonly #keyring: Keyring;
  readonly #ready = new Map<string, KeyObject>();
  readonly #pending = new Map<string, Promise<KeyObject>>();

  constructor(keyring: Keyring) {
    this.#keyring = keyring;
  }

  /** The id new values are encrypted with (read each time: a keyring may switch it). */
  primaryKeyId(): string {
    const id = this.#keyring.primaryKeyId;
    if (typeof id !== "string" || !KEY_ID.test(id)) {
      throw new CredentialError(
        "INVALID_KEY_ID",
        'The keyring\'s primaryKeyId must be 1 to 32 of A-Z a-z 0-9 _ -, e.g. "2026-01".',
      );
    }
    return id;
  }

  /** The key named `id`, already resolved, or undefined. */
  known(id: string): KeyObject | undefined {
    return this.#ready.get(id);
  }

  /** The key named `id`; rejects with the keyring's failure. */
  key(id: string): Promise<KeyObject> {
    const ready = this.#ready.get(id);
    if (ready !== undefined) return Promise.resolve(ready);
    let pending = this.#pending.get(id);
    if (pending === undefined) {
      pending = this.#resolve(id);
      this.#pending.set(id, pending);
      pending.then(
        (key) => {
          this.#ready.set(id, key);
          this.#pending.delete(id);
        },
        () => this.#pending.delete(id),
      );
    }
    return pending;
  }

  async #resolve(id: string): Promise<KeyObject> {
    const bytes: unknown = await this.#keyring.key(id);
    if (!(bytes instanceof Uint8Array) || bytes.length !== 32) {
      throw new CredentialError(
        "INVALID_ENCRYPTION_KEY",
        `The keyring gave key "${id}" as ${bytes instanceof Uint8Array ? `${bytes.length} bytes` : typeof bytes}: ` +
          "it must resolve to a 32-byte Uint8Array (e.g. from `openssl rand -base64 32`, decoded).",
      );
    }
    return createSecretKey(bytes);
  }
}
