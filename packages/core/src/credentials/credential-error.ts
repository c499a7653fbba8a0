import { PostelError } from "../errors.js";
import type { EndpointRecord } from "../storage/records.js";

/**
 * A stored credential could not be used. Codes: `CREDENTIAL_DECRYPT_FAILED` (a value is encrypted
 * under a key id `outbound.credentials` does not have, was altered or copied from another place, or
 * the keyring failed), `CREDENTIAL_ENCRYPT_FAILED` (the keyring could not give the primary key), and
 * `INVALID_ENCRYPTION_KEY` (a keyring gave a key that is not 32 bytes). Messages name the endpoint and
 * the key id, never a secret or a header value.
 */
export class CredentialError extends PostelError {
  /** The endpoint whose credential failed, when known. */
  readonly endpointId: string | null;

  constructor(code: string, message: string, options: { endpointId?: string; cause?: unknown } = {}) {
    super(code, message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CredentialError";
    this.endpointId = options.endpointId ?? null;
  }
}

// Records whose credentials could not be decrypted carry the reason under this key (never enumerated,
// so copies and JSON leave it behind): the engine defers their deliveries, the API refuses to show them.
const UNREADABLE = Symbol("postel.credentials.unreadable");

/**
 * The record with every credential removed (no header, no secret) and `error` attached: what storage
 * reads return for an endpoint whose credentials cannot be decrypted, so one bad row never fails a
 * whole listing and is never signed or sent with a wrong value.
 */
export function unreadableEndpoint(record: EndpointRecord, error: CredentialError): EndpointRecord {
  const copy: EndpointRecord = { ...record, headers: {}, secrets: [] };
  Object.defineProperty(copy, UNREADABLE, { value: error, enumerable: false });
  return copy;
}

/** Why the record's credentials could not be decrypted, or null when they were. */
export function unreadableReason(record: EndpointRecord): CredentialError | null {
  return (record as { [UNREADABLE]?: CredentialError })[UNREADABLE] ?? null;
}

/** Throws the reason the record's credentials could not be decrypted, if any. */
export function assertReadable(record: EndpointRecord): void {
  const reason = unreadableReason(record);
  if (reason !== null) throw reason;
}
