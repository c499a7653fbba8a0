import type { DeliveryOutcome } from "./delivery-storage.js";

/**
 * Direct deliveries (an optional capability, `Storage.direct`): a message that matches exactly one
 * endpoint is delivered straight from its fan-out lease, and its delivery row is written once, with
 * its outcome, instead of twice. A storage that has it accepts `DeliveryOutcome.newDelivery` in
 * `recordOutcomes`; without it the workers always record fan-out first.
 */
export interface DirectDeliveryStore {
  /**
   * Extend fan-out leases still held (token matches, message not fanned out yet) to `until`; returns
   * the ids of the messages whose lease was lost. Workers renew these while a direct delivery (see
   * `DeliveryOutcome.newDelivery`) is in flight.
   */
  renewFanoutLeases(leases: { messageId: string; token: string }[], until: number): Promise<string[]>;
}

/**
 * For `Storage` implementations: the outcomes `recordOutcomes` may apply, in order. A direct outcome
 * for a message an earlier one in the batch already fans out is dropped: its fence (the message's
 * un-fanned lease) no longer holds, so it is lease lost.
 */
export function firstDirectOutcomes(outcomes: DeliveryOutcome[]): DeliveryOutcome[] {
  const fanned = new Set<string>();
  return outcomes.filter((outcome) => {
    const messageId = outcome.newDelivery?.messageId;
    if (messageId === undefined) return true;
    if (fanned.has(messageId)) return false;
    fanned.add(messageId);
    return true;
  });
}
