import { linkTo } from "@postel/web-kit";
import type { AuditTrail } from "../audit-trail.js";
import type { Operator } from "../grant.js";
import type { Operations } from "../ops.js";

/** What every page and action gets: the operations API, where the dashboard is mounted, the request's CSRF token. */
export interface PageContext {
  ops: Operations;
  /** The mount path without a trailing slash ("" at the root). */
  base: string;
  url: URL;
  csrfToken: string;
  now: number;
  title: string;
  /** Who is asking: an admin sees the forms and buttons, a read-only operator none of them. */
  operator: Operator;
  /** Where actions are recorded (`postel.outbound.auditLog`) and confirmations spent. */
  trail: AuditTrail;
}

/** Whether the operator may change anything (the pages show no form or button otherwise). */
export const canOperate = (ctx: PageContext): boolean => ctx.operator.role === "admin";

/** A link inside the dashboard: `href(ctx, "/messages", { cursor })`; empty parameters are left out. */
export const href = (
  ctx: PageContext,
  path: string,
  params: Record<string, string | undefined> = {},
): string => linkTo(ctx.base, path, params);
