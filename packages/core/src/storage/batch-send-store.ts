import type { EnqueueOptions } from "./delivery-storage.js";
import type { NewMessage } from "./records.js";

/** Many messages in one atomic write (an optional capability, `Storage.batchSend`): `sendBatch()` needs it. */
export interface BatchSendStore<Tx = never> {
  /**
   * Insert many messages atomically, in a few statements (e.g. one multi-row INSERT per chunk of
   * rows): in `tx` when given, else in one transaction of the storage's own, so either all of them are
   * written or none is. Returns one result per message, in input order, meaning what `enqueue` called
   * for each message in order would: a message whose `idempotencyKey` is already stored (or held by a
   * transaction that then commits) inserts nothing and gets that message's id with `reused: true`; a
   * key repeated within the batch is inserted once, by its first message, and later ones get that id
   * with `reused: true`. An id already stored fails the whole call (`InvalidInputError`). An empty
   * array returns `[]`. Wakes listening workers at most once per call (e.g. one NOTIFY, on commit).
   * `sendBatch()` calls it with at most 10,000 messages.
   */
  enqueueMany(
    messages: readonly NewMessage[],
    options?: EnqueueOptions<Tx>,
  ): Promise<{ id: string; reused: boolean }[]>;
}
