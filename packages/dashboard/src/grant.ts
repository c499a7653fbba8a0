import { PostelError } from "@postel/core";

/** What an operator may do: `"admin"` operates the outbox, `"read-only"` sees every page and changes nothing. */
export type DashboardRole = "admin" | "read-only";

/**
 * What `authorize` grants a request when it says more than `true`: a role, and the name the audit
 * log records for this operator's actions.
 * @example
 * authorize: async (request) => {
 *   const user = await session(request);
 *   return user === null ? false : { role: user.isAdmin ? "admin" : "read-only", actor: user.email };
 * }
 */
export interface DashboardGrant {
  role: DashboardRole;
  /** The audit log's `actor` for this operator's actions: 1 to 200 characters. Default `"dashboard"`. */
  actor?: string | undefined;
}

/** What `authorize` answers: `true` (an admin), a grant, `false` (a plain 403) or a Response of the app's. */
export type AuthorizeVerdict = boolean | DashboardGrant | Response;

/** The caller of a request, as the pages and actions see it. */
export interface Operator {
  role: DashboardRole;
  actor: string;
}

/** `authorize` returned an object the dashboard cannot read. Code `DASHBOARD_INVALID_GRANT`. */
export class DashboardGrantError extends PostelError {}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The operator `verdict` lets in, or null when it lets nobody in. `true` is an admin (as before
 * roles existed). An object that is not a valid grant throws `DASHBOARD_INVALID_GRANT`, so a typo in
 * the app's role fails closed and its log says why, instead of guessing a role.
 */
export function operatorOf(verdict: unknown): Operator | null {
  if (verdict === true) return { role: "admin", actor: "dashboard" };
  if (typeof verdict !== "object" || verdict === null) return null;
  const { role, actor } = verdict as Partial<DashboardGrant>;
  if (role !== "admin" && role !== "read-only") {
    throw new DashboardGrantError(
      "DASHBOARD_INVALID_GRANT",
      `authorize() returned a grant with role ${JSON.stringify(role)}: a grant is { role: "admin" | "read-only", actor? }; return false to refuse.`,
    );
  }
  if (
    actor !== undefined &&
    (typeof actor !== "string" ||
      actor.length === 0 ||
      actor.length > 200 ||
      actor.includes("\u0000") ||
      LONE_SURROGATE.test(actor))
  ) {
    throw new DashboardGrantError(
      "DASHBOARD_INVALID_GRANT",
      "authorize() returned a grant whose actor is not 1 to 200 characters of text: the audit log records it as who acted.",
    );
  }
  return { role, actor: actor ?? "dashboard" };
}
