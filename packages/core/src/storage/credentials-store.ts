/** An endpoint's credentials as stored: its custom header values by name, its secrets newest first. */
export interface StoredCredentials {
  headers: Record<string, string>;
  /** The `secret` of each of its secrets, newest first (the order `getEndpoint` returns them in). */
  secrets: string[];
}

/**
 * Rewriting stored credentials in place (an optional capability of `Storage`, see
 * `Storage.credentials`): `postel.outbound.credentials.reencrypt()` encrypts plain-text rows for the
 * first time and moves values to a new key with it, while workers deliver and users edit endpoints.
 */
export interface CredentialStore {
  /**
   * Compare-and-set of one endpoint's stored credentials, in one short transaction: when the live
   * endpoint's stored header values equal `expected.headers` (the same names, each the same value;
   * the order of names does not matter) and its secrets, newest first, equal `expected.secrets`,
   * write `next`'s header values and replace each secret's value by the one at its position in
   * `next.secrets` (its `createdAt` and `expiresAt` untouched), and return true. Otherwise (a
   * concurrent update, a secret added, the endpoint missing or deleted) write nothing and return
   * false. `next` has the same header names and as many secrets as `expected`. Neither `updatedAt`
   * nor `endpointsRevision` changes: what the values mean (their plain text) is the same.
   */
  rewriteCredentials(id: string, expected: StoredCredentials, next: StoredCredentials): Promise<boolean>;
}
