import type { KeyObject } from "node:crypto";
import type { Clock } from "../clock.js";
import type { EndpointRecord, EndpointSecret } from "../storage/records.js";
import { CredentialError, unreadableEndpoint } from "./credential-error.js";
import type { Keyring } from "./credentials-options.js";
import { KeyCache } from "./key-cache.js";
import { headerPlace, open, seal, sealedKeyId, secretPlace } from "./sealed-value.js";

/** Decrypted values kept (by place and stored value), so re-reading endpoints costs no decryption. */
const OPENED_MAX = 10_000;

/**
 * Turns an endpoint's credentials (signing secrets, custom header values) into their stored form
 * and back. Without a keyring it stores plain text and reads plain text as is, but refuses values
 * that were stored encrypted (it cannot read them). A stored value that is not in the sealed form is
 * plain text written before encryption was turned on, and is read as is.
 */
export class CredentialCodec {
  readonly #keys: KeyCache | null;
  readonly #clock: Clock;
  readonly #opened = new Map<string, string>();

  constructor(keyring: Keyring | null, clock: Clock) {
    this.#keys = keyring === null ? null : new KeyCache(keyring);
    this.#clock = clock;
  }

  /** Whether new values are encrypted. */
  get encrypting(): boolean {
    return this.#keys !== null;
  }

  /** The record with its headers and secrets in their stored form. */
  async sealRecord(record: EndpointRecord): Promise<EndpointRecord> {
    if (this.#keys === null) return record;
    const [headers, secrets] = await Promise.all([
      this.sealHeaders(record.id, record.headers),
      Promise.all(record.secrets.map((secret) => this.sealSecret(record.id, secret))),
    ]);
    return { ...record, headers, secrets };
  }

  async sealHeaders(endpointId: string, headers: Record<string, string>): Promise<Record<string, string>> {
    if (this.#keys === null) return headers;
    const { keyId, key } = await this.#primary(endpointId);
    const sealed: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      sealed[name] = seal(key, keyId, value, headerPlace(endpointId, name));
    }
    return sealed;
  }

  async sealSecret(endpointId: string, secret: EndpointSecret): Promise<EndpointSecret> {
    if (this.#keys === null) return secret;
    const { keyId, key } = await this.#primary(endpointId);
    return { ...secret, secret: seal(key, keyId, secret.secret, secretPlace(endpointId, secret.createdAt)) };
  }

  /**
   * The record with its credentials decrypted. Never throws for a value it cannot decrypt: the record
   * comes back without credentials and with the reason attached (see `unreadableEndpoint`), so one
   * bad row neither fails a listing nor is ever sent. A secret that no longer signs (expired) and
   * cannot be decrypted is left out instead: rotating with no overlap is how to get past one.
   */
  async openRecord(record: EndpointRecord): Promise<EndpointRecord> {
    if (!hasSealedValue(record)) return record;
    try {
      const headers: Record<string, string> = {};
      for (const [name, stored] of Object.entries(record.headers)) {
        headers[name] = await this.#open(record.id, stored, headerPlace(record.id, name), `header "${name}"`);
      }
      const now = this.#clock.now();
      const secrets: EndpointSecret[] = [];
      for (const secret of record.secrets) {
        const place = secretPlace(record.id, secret.createdAt);
        try {
          secrets.push({
            ...secret,
            secret: await this.#open(record.id, secret.secret, place, "signing secret"),
          });
        } catch (error) {
          if (!(error instanceof CredentialError) || secret.expiresAt === null || secret.expiresAt > now)
            throw error;
        }
      }
      return { ...record, headers, secrets };
    } catch (error) {
      if (error instanceof CredentialError) return unreadableEndpoint(record, error);
      throw error;
    }
  }

  /** Whether every stored credential of the raw record is encrypted with the primary key. */
  isCurrent(record: EndpointRecord): boolean {
    const primary = this.#keys?.primaryKeyId();
    const current = (stored: string) => sealedKeyId(stored) === primary;
    return Object.values(record.headers).every(current) && record.secrets.every((s) => current(s.secret));
  }

  /**
   * The raw record's credentials encrypted again with the primary key, in storage order (plain text
   * encrypted for the first time). Throws `CredentialError` when one cannot be decrypted.
   */
  async resealed(record: EndpointRecord): Promise<{ headers: Record<string, string>; secrets: string[] }> {
    const headers: Record<string, string> = {};
    for (const [name, stored] of Object.entries(record.headers)) {
      headers[name] = await this.#open(record.id, stored, headerPlace(record.id, name), `header "${name}"`);
    }
    const plain = await Promise.all(
      record.secrets.map(async (s) => ({
        ...s,
        secret: await this.#open(record.id, s.secret, secretPlace(record.id, s.createdAt), "signing secret"),
      })),
    );
    const secrets = await Promise.all(plain.map((s) => this.sealSecret(record.id, s)));
    return { headers: await this.sealHeaders(record.id, headers), secrets: secrets.map((s) => s.secret) };
  }

  async #primary(endpointId: string): Promise<{ keyId: string; key: KeyObject }> {
    const keys = this.#keys!;
    const keyId = keys.primaryKeyId();
    try {
      return { keyId, key: keys.known(keyId) ?? (await keys.key(keyId)) };
    } catch (cause) {
      throw new CredentialError(
        "CREDENTIAL_ENCRYPT_FAILED",
        `Could not encrypt endpoint ${endpointId}'s credentials: the keyring did not give the primary key ` +
          `"${keyId}" (${reasonOf(cause)}). Nothing was written; check the keyring (or the KMS behind it) and try again.`,
        { endpointId, cause },
      );
    }
  }

  async #open(endpointId: string, stored: string, place: string, what: string): Promise<string> {
    const keyId = sealedKeyId(stored);
    if (keyId === null) return stored;
    const cached = `${place}\u0000${stored}`;
    const hit = this.#opened.get(cached);
    if (hit !== undefined) return hit;
    const failed = (message: string, cause?: unknown) =>
      new CredentialError("CREDENTIAL_DECRYPT_FAILED", `Endpoint ${endpointId}'s ${what} ${message}`, {
        endpointId,
        cause,
      });
    if (this.#keys === null) {
      throw failed(
        `is stored encrypted (key "${keyId}"), but outbound.credentials has no keys: pass the keys it ` +
          "was encrypted with, e.g. outbound.credentials: { keys: [{ id, key }] }.",
      );
    }
    let key: KeyObject;
    try {
      key = this.#keys.known(keyId) ?? (await this.#keys.key(keyId));
    } catch (cause) {
      throw failed(
        `is encrypted with key "${keyId}", which the keyring could not give (${reasonOf(cause)}): add that key ` +
          "to outbound.credentials, and keep every key a stored value is encrypted with until " +
          "credentials.reencrypt() has rewritten them all.",
        cause,
      );
    }
    const plain = open(key, stored, place);
    if (plain === null) {
      throw failed(
        `(encrypted with key "${keyId}") does not decrypt: it was altered, or copied from another endpoint ` +
          "or field. Set it again: endpoints.update() with the headers, or endpoints.rotateSecret() with " +
          'overlap "0s" for a secret.',
      );
    }
    if (this.#opened.size >= OPENED_MAX) this.#opened.delete(this.#opened.keys().next().value!);
    this.#opened.set(cached, plain);
    return plain;
  }
}

function hasSealedValue(record: EndpointRecord): boolean {
  for (const name in record.headers) if (sealedKeyId(record.headers[name]!) !== null) return true;
  return record.secrets.some((s) => sealedKeyId(s.secret) !== null);
}

function reasonOf(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}
