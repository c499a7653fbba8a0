/**
 * `@postel/dashboard/next`: serve the dashboard from a Next.js App Router catch-all route. Needs
 * nothing from Next: route handlers take and return Web `Request`/`Response`.
 */
import { type NextRoute, nextMount } from "@postel/web-kit/next";
import type { Dashboard } from "../create-dashboard.js";

/** The handlers of an App Router route file (every method, so the dashboard answers the ones it does not serve). */
export type NextDashboardRoute = NextRoute;

/**
 * The route handlers for `app/<basePath>/[[...path]]/route.ts` (an optional catch-all at the
 * dashboard's `basePath`).
 * @example
 * export const { GET, HEAD, POST, PUT, PATCH, DELETE } = nextDashboard(dashboard);
 */
export function nextDashboard(dashboard: Dashboard): NextDashboardRoute {
  return nextMount(dashboard);
}
