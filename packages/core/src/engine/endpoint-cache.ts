import { createSigner, type Signer } from "@postel/signing";
import type { RetryPolicy } from "../backoff.js";
import type { Clock } from "../clock.js";
import type { OutboundConfig } from "../config/resolved.js";
import { type CredentialError, unreadableReason } from "../credentials/credential-error.js";
import { type SnippetRedactor, snippetRedactor } from "../credentials/redact-snippet.js";
import { retryPolicyFromSpec } from "../outbound/endpoint-input.js";
import type { AutoDisableSettings, CircuitBreakerSettings, EndpointRecord } from "../storage/records.js";
import { compileTypeGlobs } from "../type-glob.js";

/** An endpoint with everything the hot path needs precomputed. */
export interface CompiledEndpoint {
  record: EndpointRecord;
  matchesType: (type: string) => boolean;
  retryPolicy: RetryPolicy;
  circuitBreaker: CircuitBreakerSettings | null;
  autoDisable: AutoDisableSettings | null;
  /** The endpoint's own `maxInFlight` / `rateLimit`, else `outbound.limits`'s; null = no limit. */
  limits: OutboundConfig["limits"];
  /** Signs with every secret valid at `now` (rotation sends several signatures). */
  signer(now: number): Signer;
  /** `content-type` and the endpoint's own headers as flat `[name, value, ...]` pairs, names lower-case. */
  headerPairs: readonly string[];
  /** Hides the endpoint's custom header values in response snippets; null when it has none. */
  redactSnippet: SnippetRedactor | null;
  /** Why its credentials could not be decrypted (it is not delivered to meanwhile), or null. */
  unreadable: CredentialError | null;
}

/** How long delivery may use a cached endpoint list before asking storage whether it changed. */
const REVALIDATE_MS = 1_000;
/** How soon an endpoint whose credentials could not be decrypted is read again (a KMS back, a key added). */
const UNREADABLE_RETRY_MS = 30_000;

/**
 * Caches compiled endpoints, keyed on storage's `endpointsRevision`, so neither fan-out nor delivery
 * reads endpoint rows per message. Local writes invalidate at once; other instances' writes are seen
 * on the next revision check (every fan-out batch, and at least every second for delivery).
 */
export class EndpointCache {
  #revision: number | null = null;
  #checkedAt = Number.NEGATIVE_INFINITY;
  #endpoints = new Map<string, CompiledEndpoint>();
  #loading: Promise<void> | null = null;
  #rereadAt = Number.POSITIVE_INFINITY;

  constructor(
    private readonly config: OutboundConfig,
    private readonly clock: Clock,
  ) {}

  /** Forget everything (after a local endpoint write). */
  invalidate(): void {
    this.#revision = null;
    this.#checkedAt = Number.NEGATIVE_INFINITY;
  }

  /** Every live endpoint, revalidated against storage now (fan-out: late binding must be exact). */
  async fresh(): Promise<Map<string, CompiledEndpoint>> {
    await this.#revalidate();
    return this.#endpoints;
  }

  /** Every live endpoint, revalidated at most every second (delivery). */
  async recent(): Promise<Map<string, CompiledEndpoint>> {
    if (this.clock.now() - this.#checkedAt >= REVALIDATE_MS || this.#revision === null)
      await this.#revalidate();
    return this.#endpoints;
  }

  async #revalidate(): Promise<void> {
    // Concurrent lanes share one in-flight reload.
    this.#loading ??= this.#load().finally(() => {
      this.#loading = null;
    });
    await this.#loading;
  }

  async #load(): Promise<void> {
    const { storage } = this.config;
    const revision = await storage.endpointsRevision();
    this.#checkedAt = this.clock.now();
    if (revision === this.#revision && this.#checkedAt < this.#rereadAt) return;
    const records = await storage.allEndpoints();
    const previous = this.#endpoints;
    const next = new Map<string, CompiledEndpoint>();
    for (const record of records) {
      const old = previous.get(record.id);
      // State changes (circuit, disable) swap the record but keep compiled matchers and decoded keys.
      // Limits are recomputed anyway: cheap, and exact even after an update within the same millisecond.
      const reusable = old && old.record.updatedAt === record.updatedAt && sameSecrets(old.record, record);
      next.set(
        record.id,
        reusable ? { ...old, record, limits: limitsOf(record, this.config) } : this.#compile(record),
      );
    }
    this.#endpoints = next;
    this.#revision = revision;
    const unreadable = records.some((record) => unreadableReason(record) !== null);
    this.#rereadAt = unreadable ? this.#checkedAt + UNREADABLE_RETRY_MS : Number.POSITIVE_INFINITY;
  }

  #compile(record: EndpointRecord): CompiledEndpoint {
    const { config } = this;
    let cached: { signer: Signer; validUntil: number } | null = null;
    return {
      record,
      matchesType: compileTypeGlobs(record.types),
      retryPolicy: retryPolicyFromSpec(record.retryPolicy, config),
      circuitBreaker: config.circuitBreaker
        ? (record.circuitBreaker ?? config.circuitBreaker)
        : record.circuitBreaker,
      autoDisable: config.autoDisable ? (record.autoDisable ?? config.autoDisable) : record.autoDisable,
      limits: limitsOf(record, config),
      headerPairs: headerPairsOf(record),
      redactSnippet: snippetRedactor(record.headers),
      unreadable: unreadableReason(record),
      signer(now) {
        if (cached === null || now >= cached.validUntil) cached = buildSigner(record, now);
        return cached.signer;
      },
    };
  }
}

function limitsOf(record: EndpointRecord, config: OutboundConfig): OutboundConfig["limits"] {
  return {
    maxInFlight: record.maxInFlight ?? config.limits.maxInFlight,
    rateLimit: record.rateLimit ?? config.limits.rateLimit,
  };
}

function headerPairsOf(record: EndpointRecord): string[] {
  const pairs = ["content-type", "application/json"];
  for (const name in record.headers) pairs.push(name.toLowerCase(), record.headers[name]!);
  return pairs;
}

function buildSigner(record: EndpointRecord, now: number): { signer: Signer; validUntil: number } {
  const valid = record.secrets.filter((s) => s.expiresAt === null || s.expiresAt > now);
  // Never sign with nothing: if every secret expired, the newest still signs.
  const keys = (valid.length > 0 ? valid : record.secrets.slice(0, 1)).map((s) => s.secret);
  const expiries = valid.map((s) => s.expiresAt).filter((t): t is number => t !== null);
  return {
    signer: createSigner(keys),
    validUntil: expiries.length > 0 ? Math.min(...expiries) : Number.POSITIVE_INFINITY,
  };
}

function sameSecrets(a: EndpointRecord, b: EndpointRecord): boolean {
  return (
    a.secrets.length === b.secrets.length &&
    a.secrets.every((s, i) => s.secret === b.secrets[i]?.secret && s.expiresAt === b.secrets[i]?.expiresAt)
  );
}
