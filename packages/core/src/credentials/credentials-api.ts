import type { Clock } from "../clock.js";
import type { ConfigurationIssue } from "../errors.js";
import type { Storage } from "../storage/storage.js";
import { CredentialCodec } from "./credential-codec.js";
import { parseCredentialsOptions } from "./credentials-options.js";
import { encryptCredentials } from "./encrypt-storage.js";
import { type ReencryptOptions, type ReencryptResult, reencrypt } from "./reencrypt.js";

/** `outbound.credentials` as the rest of core uses it. */
export interface CredentialsConfig {
  codec: CredentialCodec;
  /** The storage as given, whose endpoint rows hold the stored (encrypted) form. */
  raw: Storage<unknown>;
  /** True when encryption is off without `encryption: "off"` saying so (the start-up warning). */
  warnPlaintext: boolean;
}

/**
 * Validates `outbound.credentials` (adding its issues to `issues`) and returns the storage core works
 * on, which encrypts and decrypts endpoint credentials on the way (`encryptCredentials`).
 */
export function withCredentials(
  options: unknown,
  storage: Storage<unknown>,
  clock: Clock,
  issues: ConfigurationIssue[],
): { storage: Storage<unknown>; credentials: CredentialsConfig } {
  const settings = parseCredentialsOptions(options, "outbound.credentials", issues);
  const codec = new CredentialCodec(settings.keyring, clock);
  return {
    storage: encryptCredentials(storage, codec),
    credentials: { codec, raw: storage, warnPlaintext: settings.warnPlaintext },
  };
}

/** `postel.outbound.credentials`: how endpoint credentials are stored, and moving them to the primary key. */
export interface CredentialsApi {
  /** True when signing secrets and custom header values are written encrypted (`outbound.credentials`). */
  readonly encrypted: boolean;
  /**
   * Rewrites every stored credential not encrypted with the primary key (the first of `keys`, or the
   * keyring's `primaryKeyId`): plain-text rows written before encryption was turned on, and values
   * under older keys after a rotation. Endpoint by endpoint, each a compare-and-set in one short
   * transaction, while workers keep delivering; run it again after a failure, it picks up where the
   * stored values stand. Needs the storage's `credentials` capability (`CREDENTIAL_REWRITE_UNSUPPORTED`).
   * @example
   * const { examined, rewritten, left } = await postel.outbound.credentials.reencrypt({
   *   onProgress: ({ examined }) => console.log(`${examined} endpoints examined`),
   * });
   */
  reencrypt(options?: ReencryptOptions): Promise<ReencryptResult>;
}

/** Builds `postel.outbound.credentials`. */
export function createCredentialsApi({ codec, raw }: CredentialsConfig): CredentialsApi {
  return {
    encrypted: codec.encrypting,
    reencrypt: (options) => reencrypt(raw, codec, options),
  };
}
