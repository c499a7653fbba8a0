/**
 * `@postel/web-kit/next`: serve a Postel surface from a Next.js App Router catch-all route. Needs
 * nothing from Next: route handlers take and return Web `Request`/`Response`.
 */
import type { MountableHandler } from "./mountable.js";

/** The handlers of an App Router route file. */
export interface NextRoute {
  GET: (request: Request) => Promise<Response>;
  HEAD: (request: Request) => Promise<Response>;
  POST: (request: Request) => Promise<Response>;
  PUT: (request: Request) => Promise<Response>;
  PATCH: (request: Request) => Promise<Response>;
  DELETE: (request: Request) => Promise<Response>;
}

/** The route handlers for `app/<basePath>/[[...path]]/route.ts` (an optional catch-all at `basePath`). */
export function nextMount(handler: MountableHandler): NextRoute {
  const handle = (request: Request) => handler(request);
  return { GET: handle, HEAD: handle, POST: handle, PUT: handle, PATCH: handle, DELETE: handle };
}
