import type { Html } from "./html.js";

/** How a surface's responses may be framed and cached. */
export interface ResponderOptions {
  /**
   * Origins allowed to embed the pages in a frame (`frame-ancestors`), e.g. `["'self'"]` or
   * `["https://app.example.com"]`. Default none: no page can be framed anywhere.
   */
  frameAncestors?: readonly string[] | undefined;
}

/** Builds every response a surface sends, each with the same security headers. */
export interface Responder {
  /** The Content-Security-Policy every response carries. */
  readonly contentSecurityPolicy: string;
  /** An HTML page (`<!doctype html>` prepended), optionally setting cookies. */
  html(body: Html, status?: number, setCookies?: readonly string[]): Response;
  /** A JSON document. */
  json(value: unknown, status?: number, headers?: Record<string, string>): Response;
  /** A redirect after a POST (303, so the browser GETs the target), optionally setting cookies. */
  redirect(location: string, setCookies?: readonly string[]): Response;
  /** A static asset shipped in a package: cached briefly, since it changes only with the package. */
  asset(text: string, contentType: string): Response;
  /** A short plain-text answer (refusals and errors that must not render a page or echo input). */
  plain(status: number, text: string, headers?: Record<string, string>): Response;
}

/**
 * The Content-Security-Policy of Postel's pages: only their own script and stylesheet, no inline
 * code, images from the page itself (and `data:`), forms only to itself, framed only by
 * `frameAncestors` (none by default).
 */
export function contentSecurityPolicy(frameAncestors: readonly string[] = []): string {
  const ancestors = frameAncestors.length === 0 ? "'none'" : frameAncestors.join(" ");
  return (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    `form-action 'self'; frame-ancestors ${ancestors}; base-uri 'none'`
  );
}

/**
 * Why a `frameAncestors` list cannot be used, or null when it can: each entry is `'self'` or an
 * origin such as `https://app.example.com` (scheme, host and optional port; no path, no wildcard).
 */
export function frameAncestorsProblem(frameAncestors: unknown): string | null {
  if (!Array.isArray(frameAncestors)) return "frameAncestors must be a list such as [\"'self'\"].";
  for (const entry of frameAncestors) {
    if (entry === "'self'") continue;
    if (typeof entry !== "string" || !/^https?:\/\/[A-Za-z0-9.-]+(?::\d{1,5})?$/.test(entry)) {
      return (
        `frameAncestors entry ${JSON.stringify(entry)} is not "'self'" or an origin such as ` +
        '"https://app.example.com" (scheme, host and optional port only).'
      );
    }
  }
  return null;
}

/** A responder whose every response carries the CSP for `frameAncestors` and the other security headers. */
export function createResponder(options: ResponderOptions = {}): Responder {
  const frameAncestors = options.frameAncestors ?? [];
  const csp = contentSecurityPolicy(frameAncestors);
  const secured = (headers: Record<string, string>, cache = "no-store"): Headers => {
    const all = new Headers({
      "content-security-policy": csp,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "cross-origin-opener-policy": "same-origin",
      "cross-origin-resource-policy": "same-origin",
      "cache-control": cache,
      ...headers,
    });
    // Browsers that predate CSP's frame-ancestors honour this; it cannot name an origin, so it is
    // sent only when no framing is allowed.
    if (frameAncestors.length === 0) all.set("x-frame-options", "DENY");
    return all;
  };
  const withCookies = (headers: Headers, cookies: readonly string[]) => {
    for (const cookie of cookies) headers.append("set-cookie", cookie);
    return headers;
  };
  return {
    contentSecurityPolicy: csp,
    html: (body, status = 200, setCookies = []) =>
      new Response(`<!doctype html>\n${body.text}`, {
        status,
        headers: withCookies(secured({ "content-type": "text/html; charset=utf-8" }), setCookies),
      }),
    json: (value, status = 200, headers = {}) =>
      new Response(JSON.stringify(value), {
        status,
        headers: secured({ "content-type": "application/json; charset=utf-8", ...headers }),
      }),
    redirect: (location, setCookies = []) =>
      new Response(null, { status: 303, headers: withCookies(secured({ location }), setCookies) }),
    asset: (text, contentType) =>
      new Response(text, { headers: secured({ "content-type": contentType }, "public, max-age=300") }),
    plain: (status, text, headers = {}) =>
      new Response(`${text}\n`, {
        status,
        headers: secured({ "content-type": "text/plain; charset=utf-8", ...headers }),
      }),
  };
}
