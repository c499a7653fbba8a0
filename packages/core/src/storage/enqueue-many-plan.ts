import type { NewMessage } from "./records.js";

/** How a storage writes an `enqueueMany` batch: which messages to insert, in which statements. */
export interface EnqueueManyPlan {
  /** The message that stores each idempotency key: the first one carrying it in the batch. */
  first: Map<string, NewMessage>;
  /**
   * The messages to insert (every unkeyed one and the first of each key), keyed ones first in
   * code-unit order of their keys (so two batches sharing keys lock them in the same order and never
   * deadlock), split into statements of at most `maxRows` rows and about `maxChars` payload characters.
   */
  chunks: NewMessage[][];
}

/**
 * Plans an `enqueueMany` batch for a SQL storage: dedupes idempotency keys within the batch, orders
 * keyed rows and splits them into statements.
 * @example
 * const { first, chunks } = planEnqueueMany(messages, { maxRows: 5_000, maxChars: 8 * 1024 * 1024 });
 */
export function planEnqueueMany(
  messages: readonly NewMessage[],
  limits: { maxRows: number; maxChars: number },
): EnqueueManyPlan {
  const first = new Map<string, NewMessage>();
  const rows: NewMessage[] = [];
  for (const message of messages) {
    const key = message.idempotencyKey;
    if (key !== null) {
      if (first.has(key)) continue;
      first.set(key, message);
    }
    rows.push(message);
  }
  rows.sort(byIdempotencyKey);
  const chunks: NewMessage[][] = [];
  let start = 0;
  let chars = 0;
  for (let i = 0; i < rows.length; i++) {
    chars += rows[i]!.payload.length;
    if (i - start === limits.maxRows || (chars > limits.maxChars && i > start)) {
      chunks.push(rows.slice(start, i));
      start = i;
      chars = rows[i]!.payload.length;
    }
  }
  if (rows.length > 0) chunks.push(rows.slice(start));
  return { first, chunks };
}

/** Keyed messages first, in code-unit order of their keys; a stable sort keeps the rest in order. */
export function byIdempotencyKey(a: NewMessage, b: NewMessage): number {
  const x = a.idempotencyKey;
  const y = b.idempotencyKey;
  if (x === y) return 0;
  if (x === null) return 1;
  if (y === null) return -1;
  return x < y ? -1 : 1;
}
