import type { DeliveryRecord, DeliveryStatus } from "./records.js";

/** Which terminal deliveries `findReplayable` selects. */
export type ReplaySelector = (
  | {
      messageIds: string[];
      /** Only the deliveries to this endpoint (one per message): e.g. one dead letter of a message. */
      endpointId?: string | undefined;
    }
  | { endpointId: string; since: number; until: number }
) & {
  /**
   * Only deliveries in these (terminal) statuses; every terminal status when absent. Applied before
   * the limit, so a few failed deliveries are found among many succeeded ones.
   */
  statuses?: DeliveryStatus[] | undefined;
};

/** A delivery to reset to `pending` by `resetDeliveries`, with the `webhook-id` it will carry. */
export interface DeliveryReset {
  deliveryId: string;
  webhookId: string;
}

/**
 * Replay (an optional capability, `Storage.replay`): select terminal deliveries and put them back in
 * the queue. `postel.outbound.replay()` and the dead-letter replays need it.
 */
export interface ReplayStore {
  /**
   * Terminal deliveries (`succeeded`, `failed`, `dead-lettered`, `expired`) matching the selector —
   * for `endpointId`, those whose message was created in `[since, until)`. Capped at `limit`.
   */
  findReplayable(selector: ReplaySelector, limit: number): Promise<DeliveryRecord[]>;
  /**
   * Reset each delivery still terminal to `pending` (due `now`, retries and lease cleared, the given
   * `webhookId`) and its message to `pending` (`finishedAt` null), atomically. Returns the ids reset.
   */
  resetDeliveries(resets: DeliveryReset[], now: number): Promise<string[]>;
}
