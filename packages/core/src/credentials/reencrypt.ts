import { InvalidInputError, PostelError } from "../errors.js";
import type { EndpointRecord } from "../storage/records.js";
import type { Storage, StoredCredentials } from "../storage/storage.js";
import type { CredentialCodec } from "./credential-codec.js";
import { CredentialError } from "./credential-error.js";

/** Options of `credentials.reencrypt()`. */
export interface ReencryptOptions {
  /** Endpoints read per page, 1 to 1,000; each one found not under the primary key is rewritten in its own short transaction. Default 100. */
  batchSize?: number;
  /** Called after each page with the counts so far. */
  onProgress?: (progress: ReencryptResult) => void;
}

/** What `credentials.reencrypt()` did. */
export interface ReencryptResult {
  /** Live endpoints read. */
  examined: number;
  /** Endpoints whose stored credentials were rewritten under the primary key. */
  rewritten: number;
  /** Rewrites that lost to a concurrent change of the endpoint (each was read again and retried). */
  skipped: number;
  /**
   * Endpoints left as they were: `undecryptable` (a value under a key the keyring does not have, or
   * altered), or `busy` (changed concurrently at every one of its retries). Run again once fixed.
   */
  left: { endpointId: string; reason: "undecryptable" | "busy" }[];
}

const MAX_BATCH = 1_000;
// A rewrite that keeps losing to user updates is left for the next run rather than retried forever.
const MAX_ROUNDS = 5;

/**
 * Walks every live endpoint by keyset pages of the raw storage and rewrites each stored credential
 * that is not encrypted with the primary key (plain text included: the migration of rows written
 * before encryption). Each rewrite is a compare-and-set, so a concurrent update is never overwritten:
 * a lost one is read again and retried. Workers keep delivering meanwhile: the plain text does not
 * change, so what they cached stays right, and every stored value stays readable with the keyring.
 */
export async function reencrypt(
  raw: Storage<unknown>,
  codec: CredentialCodec,
  options: ReencryptOptions = {},
): Promise<ReencryptResult> {
  const { batchSize = 100, onProgress } = options ?? {};
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH) {
    throw new InvalidInputError(
      "INVALID_ARGUMENT",
      `batchSize must be a whole number of endpoints from 1 to ${MAX_BATCH}, e.g. 100.`,
    );
  }
  if (onProgress !== undefined && typeof onProgress !== "function") {
    throw new InvalidInputError("INVALID_ARGUMENT", "onProgress must be a function of the counts so far.");
  }
  if (!codec.encrypting) {
    throw new PostelError(
      "ENCRYPTION_NOT_CONFIGURED",
      "credentials.reencrypt() encrypts with the primary key of outbound.credentials, and none is " +
        "configured: pass outbound.credentials: { keys: [{ id, key }] } (or a keyring) to Postel().",
    );
  }
  const store = raw.credentials;
  if (store === undefined) {
    throw new PostelError(
      "CREDENTIAL_REWRITE_UNSUPPORTED",
      `The ${raw.name} storage cannot rewrite stored credentials (it has no \`credentials\` capability): ` +
        "implement Storage.credentials.rewriteCredentials (runStorageConformance checks it). New and " +
        "updated credentials are encrypted meanwhile.",
    );
  }
  const result: ReencryptResult = { examined: 0, rewritten: 0, skipped: 0, left: [] };

  const rewrite = async (record: EndpointRecord): Promise<void> => {
    let current: EndpointRecord | null = record;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      if (current === null || codec.isCurrent(current)) return;
      let next: StoredCredentials;
      try {
        next = await codec.resealed(current);
      } catch (error) {
        if (!(error instanceof CredentialError)) throw error;
        result.left.push({ endpointId: record.id, reason: "undecryptable" });
        return;
      }
      if (await store.rewriteCredentials(record.id, storedOf(current), next)) {
        result.rewritten++;
        return;
      }
      result.skipped++;
      current = await raw.getEndpoint(record.id);
    }
    if (current !== null && !codec.isCurrent(current))
      result.left.push({ endpointId: record.id, reason: "busy" });
  };

  // Keyset pages through the operations capability; without it, every live endpoint read once, in
  // id order, and cut into pages of the same size.
  let all: Promise<EndpointRecord[]> | undefined;
  const listPage = async (after: string | undefined): Promise<EndpointRecord[]> => {
    if (raw.operations !== undefined) return raw.operations.listEndpoints({ limit: batchSize, after });
    all ??= raw
      .allEndpoints()
      .then((records) => records.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
    return (await all).filter((record) => after === undefined || record.id > after).slice(0, batchSize);
  };
  let after: string | undefined;
  for (;;) {
    const page = await listPage(after);
    for (const record of page) {
      result.examined++;
      await rewrite(record);
    }
    onProgress?.({ ...result, left: [...result.left] });
    if (page.length < batchSize) return result;
    after = page[page.length - 1]!.id;
  }
}

function storedOf(record: EndpointRecord): StoredCredentials {
  return { headers: record.headers, secrets: record.secrets.map((s) => s.secret) };
}
