import { BodyTooLargeError } from "./body.js";
import type { Responder } from "./respond.js";

/** What `guardedHandler` needs: where it is mounted, who may pass, and what to serve. */
export interface GuardOptions<Caller> {
  /** The mount path without a trailing slash (`""` at the root). */
  basePath: string;
  /** The methods served; any other answers 405. */
  methods: readonly string[];
  /** Builds every refusal, so each carries the surface's security headers. */
  responder: Responder;
  /**
   * Requests served before anyone is identified (assets, a sign-in exchange): return a Response,
   * or null to go on to `identify`. `path` is below `basePath`, starting with `/`.
   */
  open?: ((request: Request, path: string) => Promise<Response | null>) | undefined;
  /**
   * Who is calling: a caller, null to refuse (a plain 403), or a Response of the app's own (a
   * redirect to its login page), sent as it is. What it throws answers a plain 500, never a page.
   */
  identify: (request: Request) => Promise<Caller | Response | null>;
  /** Serves an identified caller's request. `path` is below `basePath`, starting with `/`. */
  serve: (request: Request, caller: Caller, path: string) => Promise<Response>;
  /** Told what `identify`, `open` or `serve` threw (the client gets a plain 500). */
  onError: (error: unknown, request: Request) => void;
}

/**
 * A Web-standard handler that refuses before it serves: outside `basePath` a plain 404, another
 * method a plain 405, nobody identified a plain 403, and a body over the limit a plain 413, each
 * with the security headers and never echoing what was sent; an exception anywhere (in `identify`
 * too) is reported to `onError` and answers a plain 500 with no detail. Nothing reads the body
 * before `identify` has passed.
 */
export function guardedHandler<Caller>(
  options: GuardOptions<Caller>,
): (request: Request) => Promise<Response> {
  const { basePath, responder } = options;
  const allow = options.methods.join(", ");
  return async (request) => {
    let path: string;
    try {
      const { pathname } = new URL(request.url);
      if (pathname !== basePath && !pathname.startsWith(`${basePath}/`))
        return responder.plain(404, "Not found");
      path = pathname.slice(basePath.length) || "/";
    } catch {
      return responder.plain(400, "Bad request");
    }
    if (!options.methods.includes(request.method))
      return responder.plain(405, "Method not allowed", { allow });
    try {
      const early = options.open ? await options.open(request, path) : null;
      if (early !== null) return early;
      const caller = await options.identify(request);
      if (caller instanceof Response) return caller;
      if (caller === null) return responder.plain(403, "Forbidden");
      return await options.serve(request, caller, path);
    } catch (error) {
      if (error instanceof BodyTooLargeError) return responder.plain(413, "Request body too large");
      options.onError(error, request);
      return responder.plain(500, "Internal error");
    }
  };
}

/**
 * Why `basePath` cannot be a mount path, or null when it can: it starts with `/` and holds only
 * letters, digits and `- . _ ~ /`, with no empty segment.
 */
export function basePathProblem(basePath: unknown): string | null {
  if (typeof basePath === "string" && /^\/[A-Za-z0-9._~\-/]*$/.test(basePath) && !basePath.includes("//"))
    return null;
  return `basePath must be a path such as "/postel" (letters, digits, - . _ ~ /), got ${JSON.stringify(basePath)}.`;
}
