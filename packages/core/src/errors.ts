import { PostelError } from "@postel/signing";

export { isPostelError, PostelError } from "@postel/signing";

/** One invalid option: where it is (`outbound.retryPolicy.maxAttempts`) and how to fix it. */
export interface ConfigurationIssue {
  path: string;
  message: string;
}

/** `Postel()` or a storage constructor was given invalid options. Lists every bad field at once. */
export class ConfigurationError extends PostelError {
  readonly issues: readonly ConfigurationIssue[];

  constructor(issues: readonly ConfigurationIssue[], context = "Postel options") {
    const lines = issues.map((issue) => `  - ${issue.path || "(root)"}: ${issue.message}`);
    super("INVALID_CONFIGURATION", `Invalid ${context}:\n${lines.join("\n")}`);
    this.issues = issues;
  }
}

/**
 * Input to a call (`send`, `endpoints.create`, `replay`, ...) was rejected before anything was written.
 * Codes: `INVALID_EVENT_TYPE`, `PAYLOAD_NOT_SERIALIZABLE`, `PAYLOAD_TOO_LARGE`, `INVALID_URL`,
 * `PRIVATE_ADDRESS_NOT_ALLOWED`, `INVALID_DURATION`, `INVALID_ARGUMENT`, ...
 */
export class InvalidInputError extends PostelError {}

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
  constructor(message: string, options?: { cause?: unknown }) {
    super("STORAGE_UNAVAILABLE", message, options);
  }
}
