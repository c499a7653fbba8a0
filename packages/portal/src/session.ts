/**
 * Signing in by portal link. The app mints a link for a tenant; the token rides in the URL's
 * fragment, which browsers never send to a server, so it stays out of access logs, proxies and
 * `Referer` headers. The sign-in page's own script reads it, removes it from the address bar and
 * POSTs it once; the portal checks its signature and expiry, spends its nonce in the audit log (a
 * second use finds the nonce taken and is refused), and answers with a session cookie.
 */
import { parseDuration } from "@postel/signing/inbound";
import { cookieValue, isCrossSite, type Responder, readBodyText } from "@postel/web-kit";
import { PortalConfigurationError } from "./errors.js";
import type { PortalOutbound } from "./scope.js";
import { createPortalTokens } from "./tokens.js";

/** The session cookie's name. */
export const SESSION_COOKIE = "postel_portal_session";

/** Links live 15 minutes unless the app says otherwise, and never more than a day. */
const DEFAULT_LINK_TTL = 15 * 60_000;
const MAX_LINK_TTL = 86_400_000;
/** A sign-in POST carries one token and nothing else. */
const MAX_SIGN_IN_BYTES = 4096;

/** Options of a portal link. */
export interface LinkOptions {
  /** The tenant whose portal the link opens. */
  tenantId: string;
  /** Who the audit log says acted (default `"portal link"`). */
  actor?: string | undefined;
  /** How long the link may be used, e.g. `"15m"` (default) or `"1h"`; at most `"24h"`. */
  ttl?: string | number | undefined;
}

/** A tenant and actor resolved from a session cookie. */
export interface SessionCaller {
  tenantId: string;
  actor: string;
}

/** Links, their exchange, and the sessions they open. */
export interface PortalSessions {
  /** The path (below the app's origin) of a one-time sign-in link, the token in its fragment. */
  link(options: LinkOptions): Promise<string>;
  /** The caller of a valid session cookie, or null. */
  caller(request: Request): Promise<SessionCaller | null>;
  /** Exchanges the link token a sign-in form POSTs for a session cookie (303 to the portal). */
  exchange(request: Request, refused: (status: number, text: string) => Response): Promise<Response>;
  /** A response that ends the session (clears the cookie). */
  signOut(): Response;
}

/** Sessions signed with `secret`, whose links are spent in `outbound.auditLog`. */
export function createSessions(options: {
  secret: string | readonly string[];
  sessionTtl: number;
  basePath: string;
  outbound: PortalOutbound;
  responder: Responder;
  now: () => number;
}): PortalSessions {
  const tokens = createPortalTokens(options.secret);
  const { basePath, responder, now } = options;
  const cookiePath = basePath || "/";
  const cookie = (value: string, maxAgeSeconds: number, secure: boolean) =>
    `${SESSION_COOKIE}=${value}; Path=${cookiePath}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`;

  return {
    async link(link) {
      if (typeof link?.tenantId !== "string" || link.tenantId === "" || link.tenantId.length > 200)
        throw new PortalConfigurationError(
          "PORTAL_INVALID_LINK",
          "link() needs { tenantId }: the tenant whose portal the link opens (1 to 200 characters).",
        );
      const actor = link.actor ?? "portal link";
      if (typeof actor !== "string" || actor === "" || actor.length > 200)
        throw new PortalConfigurationError(
          "PORTAL_INVALID_LINK",
          "link() actor must be a name for the audit log of 1 to 200 characters.",
        );
      const ttl = link.ttl === undefined ? DEFAULT_LINK_TTL : parseDuration(link.ttl);
      if (ttl === undefined || ttl <= 0 || ttl > MAX_LINK_TTL)
        throw new PortalConfigurationError(
          "PORTAL_INVALID_LINK",
          `link() ttl must be a duration from "1s" to "24h" such as "15m", got ${JSON.stringify(link.ttl)}.`,
        );
      const token = await tokens.mint("link", { tenantId: link.tenantId, actor, expiresAt: now() + ttl });
      return `${basePath}/sign-in#token=${token}`;
    },
    async caller(request) {
      const value = cookieValue(request, SESSION_COOKIE);
      if (value === null) return null;
      const claims = await tokens.open("session", value, now());
      return typeof claims === "string" ? null : { tenantId: claims.tenantId, actor: claims.actor };
    },
    async exchange(request, refused) {
      if (isCrossSite(request)) return refused(403, "Sign in from the link itself, not from another site.");
      const form = new URLSearchParams(await readBodyText(request, MAX_SIGN_IN_BYTES));
      const claims = await tokens.open("link", form.get("token") ?? "", now());
      if (claims === "expired") return refused(403, "This link has expired. Ask for a new one.");
      if (typeof claims === "string") return refused(403, "This link is not valid. Ask for a new one.");
      const spent = await options.outbound.auditLog.record({
        tenantId: claims.tenantId,
        actor: claims.actor,
        action: "portal.sign-in",
        target: null,
        source: "portal",
        key: `portal-link:${claims.nonce}`,
      });
      if (!spent.recorded) return refused(403, "This link was already used. Ask for a new one.");
      const expiresAt = Math.min(now() + options.sessionTtl, Number.MAX_SAFE_INTEGER);
      const session = await tokens.mint("session", { ...claims, expiresAt });
      const secure = new URL(request.url).protocol === "https:";
      return responder.redirect(`${basePath}/`, [
        cookie(session, Math.floor(options.sessionTtl / 1000), secure),
      ]);
    },
    signOut() {
      return responder.redirect(`${basePath}/signed-out`, [cookie("", 0, false)]);
    },
  };
}
