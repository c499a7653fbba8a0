import { isPostelError, PostelError } from "@postel/signing";

// Shared with the receiving gate, which lives in @postel/signing: one class each, so `instanceof` holds
// whichever package threw.
export {
  type ConfigurationIssue,
  ConfigurationError,
  InvalidInputError,
  isPostelError,
  PostelError,
} from "@postel/signing/inbound";

/** An endpoint or message id that does not exist. Codes: `ENDPOINT_NOT_FOUND`, `MESSAGE_NOT_FOUND`. */
export class NotFoundError extends PostelError {}

/** A worker tried to record an outcome for work whose lease it no longer holds. Code `LEASE_LOST`. */
export class LeaseLostError extends PostelError {
  constructor(
    message = "The lease on this delivery expired or was taken by another worker; its outcome was not recorded.",
  ) {
    super("LEASE_LOST", message);
  }
}

/** The database schema is unusable (newer than this code, or not migrated). Code `SCHEMA_MISMATCH`. */
export class SchemaMismatchError extends PostelError {}

/**
 * The database could not be reached or opened: nothing listens at the host and port, the server
 * refused the login or the database, the pool was already ended, or the SQLite file cannot be opened.
 * Code `STORAGE_UNAVAILABLE`; the message names what was tried (host and port, or path) and the fix,
 * and the driver's error is the `cause`. Workers report it as an `error` event and retry by themselves.
 */
export class StorageUnavailableError extends PostelError {
  /**
   * True when the connection was lost while a write ran and its commit could not be checked: the
   * write may or may not have happened (e.g. `send()` during a failover; retry with an idempotencyKey).
   */
  readonly ambiguous: boolean;

  constructor(message: string, options?: { cause?: unknown; ambiguous?: boolean }) {
    super(
      "STORAGE_UNAVAILABLE",
      message,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.ambiguous = options?.ambiguous ?? false;
  }
}

/**
 * A storage call made by the workers did not settle within its deadline (half the lease): the
 * connection under it is presumed dead (a cut TCP session, a driver that never settles a query after
 * a failover). Code `STORAGE_TIMEOUT`. The workers report it as an `error` event, ask the storage to
 * replace the connections it owns (`Storage.reset`), and retry by themselves.
 */
export class StorageTimeoutError extends PostelError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("STORAGE_TIMEOUT", message, options);
  }
}

/** Whether `error` says the database cannot be used right now (`STORAGE_UNAVAILABLE` or `STORAGE_TIMEOUT`). */
export function isStorageOutage(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (code === "STORAGE_UNAVAILABLE" || code === "STORAGE_TIMEOUT") && isPostelError(error);
}

/**
 * A feature was used on a storage that lacks the optional capability it needs (see
 * `StorageCapabilities`). The code names the capability (`OPERATIONS_UNSUPPORTED`,
 * `REPLAY_UNSUPPORTED`, `RETENTION_UNSUPPORTED`, `LIMITS_UNSUPPORTED`, `BATCH_SEND_UNSUPPORTED`,
 * `AUDIT_LOG_UNSUPPORTED`, `CREDENTIAL_REWRITE_UNSUPPORTED`), and so does `capability`.
 */
export class CapabilityUnsupportedError extends PostelError {
  /** The capability's member name on the storage, e.g. `"replay"`. */
  readonly capability: string;

  constructor(code: string, capability: string, message: string) {
    super(code, message);
    this.capability = capability;
  }
}
