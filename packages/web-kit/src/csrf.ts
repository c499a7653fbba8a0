/**
 * CSRF protection for POST actions, with no server-side session store:
 *
 * - a random session value in a `SameSite=Strict`, `HttpOnly` cookie scoped to the dashboard's path;
 * - each form carries `HMAC(key, session)`, checked in constant time. An attacker who can plant a
 *   cookie (a sibling subdomain) still cannot mint the matching token without the key;
 * - a browser's `Sec-Fetch-Site` must say `same-origin`, and an `Origin` must name this host.
 */
const encoder = new TextEncoder();

/** Why a POST was refused, for the 403 page (never echoes what was sent). */
export type CsrfRefusal = "cross-site" | "missing-token" | "bad-token";

/** Issues and checks CSRF tokens with one key. */
export interface Csrf {
  /** The token for this request's session, and the cookie to set when the session is new. */
  issue(request: Request, cookiePath: string): Promise<{ token: string; setCookie: string | null }>;
  /** Null when the POST may run, else why it is refused. */
  check(request: Request, form: URLSearchParams): Promise<CsrfRefusal | null>;
}

/** Options of `createCsrf`. */
export interface CsrfOptions {
  /** The key (any string of at least 32 characters); default a random key of the guard's own. */
  secret?: string | undefined;
  /** The session cookie's name, e.g. `"postel_dashboard_csrf"`. */
  cookieName: string;
}

/** A CSRF guard keyed by `options.secret`, keeping its session in the cookie `options.cookieName`. */
export function createCsrf(options: CsrfOptions): Csrf {
  const { secret, cookieName } = options;
  const raw = secret === undefined ? crypto.getRandomValues(new Uint8Array(32)) : encoder.encode(secret);
  const key = crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
    "verify",
  ]);
  return {
    async issue(request, cookiePath) {
      const existing = sessionOf(request, cookieName);
      const session = existing ?? toBase64Url(crypto.getRandomValues(new Uint8Array(32)));
      const mac = await crypto.subtle.sign("HMAC", await key, encoder.encode(session));
      const secure = new URL(request.url).protocol === "https:" ? "; Secure" : "";
      return {
        token: toBase64Url(new Uint8Array(mac)),
        setCookie:
          existing === null
            ? `${cookieName}=${session}; Path=${cookiePath}; HttpOnly; SameSite=Strict${secure}`
            : null,
      };
    },
    async check(request, form) {
      if (isCrossSite(request)) return "cross-site";
      const session = sessionOf(request, cookieName);
      const token = form.get("_csrf");
      if (session === null || token === null || token === "") return "missing-token";
      const mac = fromBase64Url(token);
      if (mac === null) return "bad-token";
      const valid = await crypto.subtle.verify("HMAC", await key, mac, encoder.encode(session));
      return valid ? null : "bad-token";
    },
  };
}

/**
 * Whether a browser says the request comes from another site: a `Sec-Fetch-Site` other than
 * `same-origin`, or an `Origin` naming another host.
 */
export function isCrossSite(request: Request): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin") return true;
  const origin = request.headers.get("origin");
  // Under `Referrer-Policy: no-referrer` Chromium sends `Origin: null` with our own forms; it is
  // trusted only when the browser also says the request is same-origin.
  const opaque = origin === "null" && site === "same-origin";
  // Hosts, not origins: behind a TLS-terminating proxy the app may see http:// while the browser
  // sends https://; a cross-site attacker's page never has this host.
  return origin !== null && !opaque && hostOf(origin) !== new URL(request.url).host;
}

function sessionOf(request: Request, cookieName: string): string | null {
  const value = cookieValue(request, cookieName);
  return value !== null && /^[A-Za-z0-9_-]{43}$/.test(value) ? value : null;
}

/** The value of the cookie `name` the request carries, or null. */
export function cookieValue(request: Request, name: string): string | null {
  const cookies = request.headers.get("cookie") ?? "";
  for (const part of cookies.split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return null;
}

function hostOf(origin: string): string | null {
  try {
    return new URL(origin).host;
  } catch {
    return null;
  }
}

/** Unpadded base64url of `bytes` (runs on every runtime: no `Buffer`). */
export function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The bytes of unpadded base64url `text` of at most `maxLength` characters, or null when it is not that. */
export function fromBase64Url(text: string, maxLength = 128): Uint8Array<ArrayBuffer> | null {
  if (text.length === 0 || text.length > maxLength || !/^[A-Za-z0-9_-]+$/.test(text)) return null;
  if (text.length % 4 === 1) return null;
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
