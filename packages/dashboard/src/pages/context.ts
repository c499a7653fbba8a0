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
}

/** A link inside the dashboard: `href(ctx, "/messages", { status: "pending" })`; empty parameters are left out. */
export function href(
  ctx: PageContext,
  path: string,
  params: Record<string, string | undefined> = {},
): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value) query.set(name, value);
  const search = query.toString();
  return `${ctx.base}${path}${search ? `?${search}` : ""}`;
}
