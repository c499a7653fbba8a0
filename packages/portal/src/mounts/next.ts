/**
 * `@postel/portal/next`: serve the portal from a Next.js App Router catch-all route. Needs
 * nothing from Next: route handlers take and return Web `Request`/`Response`.
 */
import { type NextRoute, nextMount } from "@postel/web-kit/next";
import type { Portal } from "../create-portal.js";

/** The handlers of an App Router route file (every method, so the portal answers the ones it does not serve). */
export type NextPortalRoute = NextRoute;

/**
 * The route handlers for `app/<basePath>/[[...path]]/route.ts` (an optional catch-all at the
 * portal's `basePath`).
 * @example
 * export const { GET, HEAD, POST, PUT, PATCH, DELETE } = nextPortal(portal);
 */
export function nextPortal(portal: Portal): NextPortalRoute {
  return nextMount(portal);
}
