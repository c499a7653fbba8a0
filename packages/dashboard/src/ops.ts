/**
 * The operations API the pages call: `postel.outbound`'s keyset lists, dead letters and permanent
 * failures, stats, the timeline, replay and the held ordering keys. Every page and action goes through `Operations`, so a
 * test (or an app) can hand the dashboard anything that has these calls.
 */
import type { ListDeadLettersOptions, ListMessagesOptions, Outbound, Storage } from "@postel/core";

/** The part of a Postel instance the dashboard uses: its public outbound API. */
export interface DashboardPostel {
  outbound: Operations;
}

/** What the dashboard calls: the operations API of `postel.outbound`. */
export type Operations = Pick<
  Outbound<Storage<unknown>>,
  | "endpoints"
  | "messages"
  | "deadLetters"
  | "failed"
  | "stats"
  | "timeline"
  | "replay"
  | "auditLog"
  | "orderingKeys"
>;

/** Filters of the messages listing. */
export type MessageFilter = ListMessagesOptions & { since?: number | undefined; until?: number | undefined };

/** Filters of the dead-letter listing (`since`/`until` apply to `deadLetteredAt`). */
export type DeadLetterFilter = ListDeadLettersOptions & {
  since?: number | undefined;
  until?: number | undefined;
};

/** The operations API of `postel`. */
export function operations(postel: DashboardPostel): Operations {
  return postel.outbound;
}
