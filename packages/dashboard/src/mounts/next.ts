/**
 * `@postel/dashboard/next`: serve the dashboard from a Next.js App Router catch-all route. Needs
 * nothing from Next: route handlers take and return Web `Request`/`Response`.
 */
import type { Dashboard } from "../create-dashboard.js";

/** The handlers of an App Router route file. */
export interface NextDashboardRoute {
  GET: (request: Request) => Promise<Response>;
  HEAD: (request: Request) => Promise<Response>;
  POST: (request: Request) => Promise<Response>;
}

/**
 * The route handlers for `app/<basePath>/[[...path]]/route.ts` (an optional catch-all at the
 * dashboard's `basePath`).
 * @example
 * export const { GET, HEAD, POST } = nextDashboard(dashboard);
 */
export function nextDashboard(dashboard: Dashboard): NextDashboardRoute {
  const handle = (request: Request) => dashboard(request);
  return { GET: handle, HEAD: handle, POST: handle };
}
