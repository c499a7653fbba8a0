import type { DeliveryTransition, FanoutResult } from "./delivery-storage.js";
import {
  type DeliveryStatus,
  type KeyFailurePolicy,
  type MessageStatus,
  TERMINAL_DELIVERY_STATUSES,
} from "./records.js";

/**
 * The status a delivery takes for each transition core decides. Storages persist it as given (a SQL
 * storage binds `deliveryStatusOf(transition)`); none decides it again.
 */
export const TRANSITION_STATUS: { readonly [K in DeliveryTransition["kind"]]: DeliveryStatus } = {
  succeeded: "succeeded",
  retry: "pending",
  failed: "failed",
  "dead-lettered": "dead-lettered",
  expired: "expired",
  deferred: "pending",
  held: "held",
  cancelled: "cancelled",
};

/** The status a delivery takes for `transition` (`TRANSITION_STATUS`). */
export function deliveryStatusOf(transition: DeliveryTransition): DeliveryStatus {
  return TRANSITION_STATUS[transition.kind];
}

/**
 * A message's final status once every one of its deliveries is terminal: the first rule whose
 * `anyDelivery` status one of its deliveries has, else `MESSAGE_FINISHED_OTHERWISE`. A SQL storage
 * builds its expression from this table (`finalStatusCase`).
 */
export const MESSAGE_FINAL_STATUS: readonly {
  readonly anyDelivery: DeliveryStatus;
  readonly message: MessageStatus;
}[] = [
  { anyDelivery: "dead-lettered", message: "dead-lettered" },
  { anyDelivery: "expired", message: "expired" },
];

/** A finished message none of whose deliveries matches a `MESSAGE_FINAL_STATUS` rule (none at all included). */
export const MESSAGE_FINISHED_OTHERWISE: MessageStatus = "dispatched";

/** The message statuses that end a message's life (retention deletes only these). */
export const FINISHED_MESSAGE_STATUSES: readonly MessageStatus[] = ["dispatched", "dead-lettered", "expired"];

/** The terminal delivery statuses a replay puts back in the queue (`cancelled` is not: its endpoint is gone). */
export const REPLAYABLE_DELIVERY_STATUSES: readonly DeliveryStatus[] = TERMINAL_DELIVERY_STATUSES.filter(
  (status) => status !== "cancelled",
);

/** Whether a delivery in `status` is done (`TERMINAL_DELIVERY_STATUSES`). */
export function isTerminal(status: DeliveryStatus): boolean {
  return TERMINAL_DELIVERY_STATUSES.includes(status);
}

/**
 * The final status of a message with deliveries in `statuses` (its every delivery), or null while
 * one of them is not terminal.
 */
export function finalMessageStatus(statuses: Iterable<DeliveryStatus>): MessageStatus | null {
  const all = [...statuses];
  if (!all.every(isTerminal)) return null;
  return (
    MESSAGE_FINAL_STATUS.find((rule) => all.includes(rule.anyDelivery))?.message ?? MESSAGE_FINISHED_OTHERWISE
  );
}

// A message with one delivery (a direct delivery) finishes as that delivery's transition says: worked
// out once per transition, not per outcome on the workers' hot path.
const ONLY_DELIVERY_FINAL = Object.fromEntries(
  Object.entries(TRANSITION_STATUS).map(([kind, status]) => [kind, finalMessageStatus([status])]),
) as { readonly [K in DeliveryTransition["kind"]]: MessageStatus | null };

/**
 * The final status of a message whose only delivery takes `transition` (`finalMessageStatus` of that
 * one delivery's status), or null while that delivery is not terminal (retry, deferred, held).
 */
export function onlyDeliveryFinalStatus(transition: DeliveryTransition): MessageStatus | null {
  return ONLY_DELIVERY_FINAL[transition.kind];
}

/** The status fan-out gives a message: `expired` when its ttl elapsed, final when no endpoint matched, else null (pending). */
export function fanoutMessageStatus(
  result: Pick<FanoutResult, "expired" | "deliveries">,
): MessageStatus | null {
  if (result.expired === true) return "expired";
  return result.deliveries.length === 0 ? finalMessageStatus([]) : null;
}

/**
 * `MESSAGE_FINAL_STATUS` as a SQL `CASE` expression: `anyDelivery(status)` is the storage's SQL for
 * "one of the message's deliveries is in `status`".
 */
export function finalStatusCase(anyDelivery: (status: DeliveryStatus) => string): string {
  const when = MESSAGE_FINAL_STATUS.map(
    (rule) => `WHEN ${anyDelivery(rule.anyDelivery)} THEN '${rule.message}'`,
  );
  return `CASE ${when.join(" ")} ELSE '${MESSAGE_FINISHED_OTHERWISE}' END`;
}

/** Statuses as a SQL list, e.g. `('succeeded', 'failed')`: they are fixed words, never user input. */
export function sqlStatusList(statuses: readonly string[]): string {
  return `(${statuses.map((status) => `'${status}'`).join(", ")})`;
}

/**
 * Whether a keyed delivery taking `transition` holds its key (`DeliveryOutcome.holdKey`): it failed for
 * good or dead-lettered on an endpoint whose `onKeyFailure` is `hold`. Expiry and cancellation never hold.
 */
export function holdsKey(policy: KeyFailurePolicy, transition: DeliveryTransition): boolean {
  return policy === "hold" && (transition.kind === "failed" || transition.kind === "dead-lettered");
}
