import { linkTo } from "@postel/web-kit";
import type { TenantScope } from "../scope.js";
import type { Theme } from "../theme.js";

/** What every page and form handler gets: the tenant's scope, where the portal is mounted, the request. */
export interface PageContext {
  scope: TenantScope;
  /** The mount path without a trailing slash (`""` at the root). */
  base: string;
  url: URL;
  csrfToken: string;
  now: number;
  theme: Theme;
  /** The actor shown in the header ("Signed in as …"). */
  actor: string;
  /** Whether the caller came by a portal link (a session Postel keeps), so "Sign out" is Postel's to offer. */
  linkSession: boolean;
}

/** A link inside the portal: `href(ctx, "/messages", { cursor })`; empty parameters are left out. */
export const href = (
  ctx: PageContext,
  path: string,
  params: Record<string, string | undefined> = {},
): string => linkTo(ctx.base, path, params);

/** A path segment for an id (ids are checked by the scope; this only keeps the URL well-formed). */
export const seg = (id: string) => encodeURIComponent(id);
