import type { Html } from "./html.js";

/**
 * The Content-Security-Policy of every response: only the dashboard's own script and stylesheet,
 * no inline code, no framing, forms only to itself.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

function secured(headers: Record<string, string>, cache = "no-store"): Headers {
  return new Headers({
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
    "cache-control": cache,
    ...headers,
  });
}

/** An HTML page. */
export function htmlResponse(body: Html, status = 200, setCookie: string | null = null): Response {
  const headers = secured({ "content-type": "text/html; charset=utf-8" });
  if (setCookie !== null) headers.append("set-cookie", setCookie);
  return new Response(`<!doctype html>\n${body.text}`, { status, headers });
}

/** JSON for the live view. */
export function jsonResponse(value: unknown, status = 200): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: secured({ "content-type": "application/json; charset=utf-8" }),
  });
}

/** A redirect after a POST (303, so the browser GETs the target). */
export function redirect(location: string): Response {
  return new Response(null, { status: 303, headers: secured({ location }) });
}

/** A static asset shipped in the package; cached briefly since it changes only with the package version. */
export function assetResponse(text: string, contentType: string): Response {
  return new Response(text, {
    headers: secured({ "content-type": contentType }, "public, max-age=300"),
  });
}
