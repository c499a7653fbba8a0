import { linkTo } from "@postel/web-kit";
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

/** A link inside the dashboard: `href(ctx, "/messages", { cursor })`; empty parameters are left out. */
export const href = (
  ctx: PageContext,
  path: string,
  params: Record<string, string | undefined> = {},
): string => linkTo(ctx.base, path, params);
