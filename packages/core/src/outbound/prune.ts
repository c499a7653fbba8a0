import { requireCapability } from "../storage/capabilities.js";
import * as v from "valibot";
import type { Clock } from "../clock.js";
import type { OutboundConfig } from "../config/resolved.js";
import { DEFAULT_PRUNE_BATCH, PruneBatchSizeSchema } from "../config/schemas.js";
import { type Duration, toMs } from "../duration.js";
import { InvalidInputError } from "../errors.js";
import { messageIdBound } from "../ids.js";
import type { MessageLookup, OperationsStore, RetentionStore } from "../storage/storage.js";

/** Options of `postel.outbound.prune()`. */
export interface PruneOptions {
  /** Delete finished messages that finished longer ago than this. Default: `retention.maxAge`. */
  olderThan?: Duration;
  /** Messages examined per transaction, 1 to 10,000. Default: `retention.batchSize`, else 500. */
  batchSize?: number;
  /** Stop after this many batches (`complete: false` if more was left); call again to go on. */
  maxBatches?: number;
  /** Stop between batches once aborted (`complete: false`); the batch running commits first. */
  signal?: AbortSignal;
  /** Called after every batch with the totals so far (`complete` true on the last call of a whole pass). */
  onProgress?: (progress: PruneResult) => void;
  /**
   * Delete nothing: count what the pass would delete now (messages, deliveries, attempts), reading
   * `batchSize` messages at a time, each one's deliveries and attempts. `healthBuckets` is not
   * counted (0): no storage read returns the buckets. Slower than deleting: for a count beforehand.
   */
  dryRun?: boolean;
}

/** What a prune pass deleted. */
export interface PruneResult {
  messages: number;
  deliveries: number;
  /** Attempt records (every HTTP attempt of the deleted deliveries). */
  attempts: number;
  /** Endpoint health buckets (attempt and failure counters per 10 s) older than the same age. */
  healthBuckets: number;
  /** False when `maxBatches` or `signal` stopped the pass before the end of the old history. */
  complete: boolean;
}

/** One pass over the history older than `finishedBefore`, batch by batch (see `RetentionStore`). */
export interface PrunePass {
  finishedBefore: number;
  batchSize: number;
  maxBatches?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Awaited between batches with how long the last one took (the workers pause there). */
  between?: (lastBatchMs: number) => Promise<void>;
  /** Called after every batch with the totals so far. */
  onProgress?: ((progress: PruneResult) => void) | undefined;
}

/**
 * Deletes, batch by batch, the finished messages (with all their deliveries and attempts) that
 * finished before `pass.finishedBefore`, walking message ids up to the id bound of that time; then
 * the endpoint health buckets that started before it.
 */
export async function runPrunePass(
  storage: RetentionStore,
  clock: Clock,
  pass: PrunePass,
): Promise<PruneResult> {
  const result: PruneResult = { messages: 0, deliveries: 0, attempts: 0, healthBuckets: 0, complete: false };
  const below = messageIdBound(pass.finishedBefore);
  let after: string | null = "";
  let lastBatchMs = 0;
  for (let batches = 0; ; batches++) {
    if (batches > 0) await pass.between?.(lastBatchMs);
    if (pass.signal?.aborted || batches >= (pass.maxBatches ?? Number.POSITIVE_INFINITY)) return result;
    const started = clock.now();
    if (after !== null) {
      const batch = await storage.pruneFinished({
        finishedBefore: pass.finishedBefore,
        after,
        below,
        limit: pass.batchSize,
      });
      result.messages += batch.messages;
      result.deliveries += batch.deliveries;
      result.attempts += batch.attempts;
      after = batch.next;
    } else {
      // The messages are done: then the health counters of the same age, the same batch at a time.
      const deleted = await storage.pruneHealth({
        startedBefore: pass.finishedBefore,
        limit: pass.batchSize,
      });
      result.healthBuckets += deleted;
      result.complete = deleted < pass.batchSize;
    }
    pass.onProgress?.({ ...result });
    if (result.complete) return result;
    lastBatchMs = clock.now() - started;
  }
}

/**
 * What `runPrunePass` would delete, read and left in place: the messages `pruneFinished` would take
 * (finished before `pass.finishedBefore`, none of their deliveries pending or held), with all their
 * deliveries and attempts. Health buckets are not counted.
 */
async function countPrunePass(
  storage: MessageLookup,
  operations: OperationsStore,
  pass: PrunePass,
): Promise<PruneResult> {
  const result: PruneResult = { messages: 0, deliveries: 0, attempts: 0, healthBuckets: 0, complete: false };
  let after: string | undefined;
  for (let batches = 0; ; batches++) {
    if (pass.signal?.aborted || batches >= (pass.maxBatches ?? Number.POSITIVE_INFINITY)) return result;
    // Created before then too (a message finishes after it is created), newest first.
    const page = await operations.listMessages({ limit: pass.batchSize, after, until: pass.finishedBefore });
    for (const message of page) {
      if (
        message.status === "pending" ||
        (message.finishedAt ?? pass.finishedBefore) >= pass.finishedBefore
      ) {
        continue;
      }
      const deliveries = await storage.listDeliveries(message.id);
      if (deliveries.some((d) => d.status === "pending" || d.status === "held")) continue;
      result.messages += 1;
      result.deliveries += deliveries.length;
      result.attempts += (await operations.listAttempts(message.id)).length;
    }
    result.complete = page.length < pass.batchSize;
    pass.onProgress?.({ ...result });
    if (result.complete) return result;
    after = page[page.length - 1]!.id;
  }
}

const PruneOptionsSchema = v.strictObject({
  olderThan: v.optional(v.unknown()),
  batchSize: v.optional(PruneBatchSizeSchema),
  maxBatches: v.optional(
    v.pipe(
      v.number("must be a whole number of batches >= 1"),
      v.check((n) => Number.isInteger(n) && n >= 1, "must be a whole number of batches >= 1"),
    ),
  ),
  signal: v.optional(v.instance(AbortSignal, "must be an AbortSignal")),
  onProgress: v.optional(v.function("must be a function")),
  dryRun: v.optional(v.boolean("must be true or false")),
});

/**
 * `postel.outbound.prune()`: one full pass over the finished history older than `olderThan` (or the
 * configured `retention.maxAge`), validated before anything is deleted.
 */
export async function prune(
  deps: { config: OutboundConfig; clock: Clock },
  options: PruneOptions = {},
): Promise<PruneResult> {
  const parsed = v.safeParse(PruneOptionsSchema, options);
  if (!parsed.success) {
    const lines = parsed.issues.map((issue) => {
      const path = v.getDotPath(issue) ?? "(options)";
      return `${path}: ${issue.type === "strict_object" ? "unknown option (check the spelling)" : issue.message}`;
    });
    throw new InvalidInputError(
      "INVALID_ARGUMENT",
      `prune() options are invalid:\n  - ${lines.join("\n  - ")}`,
    );
  }
  const { retention, storage } = deps.config;
  const olderThan = options.olderThan;
  if (olderThan === undefined && retention === null) {
    throw new InvalidInputError(
      "RETENTION_NOT_CONFIGURED",
      'prune() needs an age: pass prune({ olderThan: "30d" }), or configure ' +
        'Postel({ outbound: { retention: { maxAge: "30d" } } }) and the workers prune by themselves.',
    );
  }
  const ageMs = olderThan === undefined ? retention!.maxAgeMs : toMs(olderThan, "prune() olderThan");
  const pass: PrunePass = {
    finishedBefore: deps.clock.now() - ageMs,
    batchSize: options.batchSize ?? retention?.batchSize ?? DEFAULT_PRUNE_BATCH,
    maxBatches: options.maxBatches,
    signal: options.signal,
    onProgress: options.onProgress,
  };
  if (options.dryRun) {
    return countPrunePass(storage, requireCapability(storage, "operations", "prune({ dryRun: true })"), pass);
  }
  return runPrunePass(requireCapability(storage, "retention", "prune()"), deps.clock, pass);
}
