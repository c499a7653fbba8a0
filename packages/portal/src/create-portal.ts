import { isPostelError, systemClock } from "@postel/core";
import { parseDuration } from "@postel/signing/inbound";
import {
  basePathProblem,
  createCsrf,
  createResponder,
  frameAncestorsProblem,
  guardedHandler,
  type Html,
  html,
  readBodyText,
} from "@postel/web-kit";
import { serveApi, statusOf } from "./api.js";
import { PortalConfigurationError } from "./errors.js";
import type { PageContext } from "./pages/context.js";
import { problemPage } from "./pages/layout.js";
import { getPage, type PageAnswer, postForm } from "./pages/router.js";
import { SIGN_IN_SCRIPT, signInPage, standalonePage } from "./pages/sign-in.js";
import { type PortalOutbound, type TenantLimits, type TenantScope, tenantScope } from "./scope.js";
import { createSessions, type LinkOptions } from "./session.js";
import { createTheme, type ThemeOptions } from "./theme.js";

/** Who is using the portal: the tenant whose data it shows, and a name for the audit log. */
export interface PortalCaller {
  tenantId: string;
  actor: string;
}

/** Options of `createPortal`. */
export interface PortalOptions {
  /** The Postel instance whose outbox the portal shows, tenant by tenant (it uses `postel.outbound`). */
  postel: { outbound: PortalOutbound };
  /**
   * Resolves the tenant (and an actor name for the audit log) from your app's own session, for
   * every request. Return null to refuse (a plain 403), or a Response of your own (a redirect to
   * your login page). Give this, `secret` (portal links), or both.
   */
  authenticate?:
    | ((request: Request) => Promise<PortalCaller | null | Response> | PortalCaller | null | Response)
    | undefined;
  /**
   * Key(s) of portal links and the sessions they open, each at least 32 characters; newest first
   * (the first signs, every one verifies). Drop a key to revoke every link and session it signed.
   */
  secret?: string | readonly string[] | undefined;
  /** How long a session opened by a link lasts, e.g. `"8h"` (default). */
  sessionTtl?: string | number | undefined;
  /** The path the portal is mounted at, e.g. `"/webhooks"`. Default `"/"`. */
  basePath?: string | undefined;
  /** Per-tenant limits: endpoints, and test events and recovers per hour. */
  limits?: Partial<TenantLimits> | undefined;
  /** Origins allowed to frame the portal (`'self'`, `https://app.example.com`); default none. */
  frameAncestors?: readonly string[] | undefined;
  /** Title, logo and colours. */
  theme?: ThemeOptions | undefined;
  /**
   * Key of the pages' CSRF tokens, at least 32 characters. Default: derived from `secret`, else
   * random per `createPortal` call (set it when several instances serve the portal).
   */
  csrfSecret?: string | undefined;
  /** Told what a request threw (the client gets a plain 500). Default `console.error`. */
  onError?: ((error: unknown, request: Request) => void) | undefined;
  /** The clock for link and session expiry and the hourly limits (tests pass `ManualClock`). */
  clock?: { now(): number } | undefined;
}

/** The portal: a Web-standard handler, where it expects to be mounted, and its link minting. */
export interface Portal {
  (request: Request): Promise<Response>;
  /** The mount path without a trailing slash (`""` at the root). */
  readonly basePath: string;
  /**
   * A one-time sign-in link for a tenant (needs `secret`): the path of the portal's sign-in page
   * with the token in its fragment; prefix it with your app's origin. Refused once used, once
   * expired (`ttl`, default `"15m"`), and once its key is dropped from `secret`.
   * @example
   * const url = `https://app.example.com${await portal.link({ tenantId: "acme", actor: "ada@acme.test" })}`;
   */
  link(options: LinkOptions): Promise<string>;
}

/** Who is calling, and whether through a link's session. */
interface Caller extends PortalCaller {
  linkSession: boolean;
}

/**
 * Creates the customer portal's handler: its pages, and its JSON API under `<basePath>/api/`, each
 * request scoped to the tenant `authenticate` (or a portal link's session) resolves. Refuses to be
 * created with neither.
 * @example
 * const portal = createPortal({ postel, basePath: "/webhooks", authenticate: (request) => tenantOf(request) });
 */
export function createPortal(options: PortalOptions): Portal {
  const basePath = checkOptions(options);
  const responder = createResponder({ frameAncestors: options.frameAncestors });
  const clock = options.clock ?? systemClock;
  const theme = createTheme(options.theme);
  const outbound = options.postel.outbound;
  const sessions =
    options.secret === undefined
      ? null
      : createSessions({
          secret: options.secret,
          sessionTtl: sessionTtlOf(options.sessionTtl),
          basePath,
          outbound,
          responder,
          now: () => clock.now(),
        });
  const csrf = createCsrf({
    secret: options.csrfSecret ?? csrfKeyOf(options.secret),
    cookieName: "postel_portal_csrf",
  });
  const onError = options.onError ?? ((error) => console.error("[postel] portal request failed:", error));
  const standalone = (status: number, title: string, text: string) =>
    responder.html(standalonePage(basePath, theme, title, html`<p>${text}</p>`), status);

  const open = async (request: Request, path: string): Promise<Response | null> => {
    if (path === "/assets/portal.css") return responder.asset(theme.stylesheet, "text/css; charset=utf-8");
    if (path === "/assets/sign-in.js")
      return responder.asset(SIGN_IN_SCRIPT, "text/javascript; charset=utf-8");
    if (path === "/signed-out") return standalone(200, "Signed out", "You have left the webhooks portal.");
    if (path !== "/sign-in") return null;
    if (sessions === null) return responder.plain(404, "Not found");
    if (request.method === "GET" || request.method === "HEAD")
      return responder.html(signInPage(basePath, theme));
    if (request.method !== "POST")
      return responder.plain(405, "Method not allowed", { allow: "GET, HEAD, POST" });
    return sessions.exchange(request, (status, text) => standalone(status, "Cannot sign in", text));
  };

  const identify = async (request: Request): Promise<Caller | Response | null> => {
    const session = sessions === null ? null : await sessions.caller(request);
    if (session !== null) return { ...session, linkSession: true };
    if (options.authenticate === undefined) return null;
    const caller = await options.authenticate(request);
    if (caller instanceof Response || caller === null) return caller;
    if (typeof caller?.tenantId !== "string" || caller.tenantId === "" || typeof caller.actor !== "string")
      throw new PortalConfigurationError(
        "PORTAL_INVALID_CALLER",
        "authenticate() must return { tenantId, actor } (non-empty tenantId), null, or a Response.",
      );
    return { tenantId: caller.tenantId, actor: caller.actor, linkSession: false };
  };

  const servePage = async (request: Request, caller: Caller, path: string, scope: TenantScope) => {
    const { token, setCookie } = await csrf.issue(request, basePath || "/");
    const ctx: PageContext = {
      scope,
      base: basePath,
      url: new URL(request.url),
      csrfToken: token,
      now: clock.now(),
      theme,
      actor: caller.actor,
      linkSession: caller.linkSession,
    };
    const cookies = setCookie === null ? [] : [setCookie];
    const page = (body: Html, status = 200) => responder.html(body, status, cookies);
    try {
      let answer: PageAnswer;
      if (request.method === "POST") {
        const form = new URLSearchParams(await readBodyText(request));
        const refused = await csrf.check(request, form);
        if (refused !== null) return page(problemPage(ctx, "Refused", REFUSED[refused]), 403);
        if (path === "/sign-out")
          return sessions?.signOut() ?? page(problemPage(ctx, "Not found", "There is nothing here."), 404);
        answer = await postForm(ctx, path, form);
      } else if (request.method === "GET" || request.method === "HEAD") {
        answer = await getPage(ctx, path);
      } else {
        return responder.plain(405, "Method not allowed", { allow: "GET, HEAD, POST" });
      }
      if (answer === null) return page(problemPage(ctx, "Not found", "There is nothing here."), 404);
      if ("redirect" in answer) return responder.redirect(answer.redirect, cookies);
      if ("status" in answer) return page(answer.body, answer.status);
      return page(answer);
    } catch (error) {
      const status = isPostelError(error) ? statusOf(error) : 0;
      if (status === 0 || !isPostelError(error)) throw error;
      const title = status === 404 ? "Not found" : status === 429 ? "Limit reached" : "Cannot do that";
      return page(problemPage(ctx, title, status === 404 ? "There is nothing here." : error.message), status);
    }
  };

  const handle = guardedHandler<Caller>({
    basePath,
    methods: ["GET", "HEAD", "POST", "PATCH", "DELETE"],
    responder,
    onError,
    open,
    identify,
    serve: async (request, caller, path) => {
      const scope = tenantScope(outbound, caller, options.limits ?? {}, clock);
      if (path.startsWith("/api/")) {
        const answer = await serveApi(request, scope, path.slice(5), responder);
        return answer ?? responder.json({ error: { code: "NOT_FOUND", message: "No such route." } }, 404);
      }
      return servePage(request, caller, path, scope);
    },
  });
  return Object.assign(handle, {
    basePath,
    link: (link: LinkOptions) => {
      if (sessions === null)
        return Promise.reject(
          new PortalConfigurationError(
            "PORTAL_LINKS_DISABLED",
            "link() needs createPortal({ secret }): the key that signs portal links and their sessions.",
          ),
        );
      return sessions.link(link);
    },
  });
}

const REFUSED = {
  "cross-site": "This form was sent from another site. Nothing was changed.",
  "missing-token": "This form carried no portal token. Reload the page and try again; nothing was changed.",
  "bad-token": "This form's portal token is not valid. Reload the page and try again; nothing was changed.",
};

/** The CSRF key a link secret implies: its own derivation, so neither key can stand in for the other. */
function csrfKeyOf(secret: string | readonly string[] | undefined): string | undefined {
  const first = typeof secret === "string" ? secret : secret?.[0];
  return first === undefined ? undefined : `postel-portal-csrf:${first}`;
}

function sessionTtlOf(value: string | number | undefined): number {
  const ms = value === undefined ? 8 * 3_600_000 : parseDuration(value);
  if (ms === undefined || ms < 60_000 || ms > 30 * 86_400_000)
    throw new PortalConfigurationError(
      "PORTAL_INVALID_OPTIONS",
      `createPortal() sessionTtl must be a duration from "1m" to "30d" such as "8h", got ${JSON.stringify(value)}.`,
    );
  return ms;
}

function checkOptions(options: PortalOptions): string {
  if (typeof options?.authenticate !== "function" && options?.secret === undefined) {
    throw new PortalConfigurationError(
      "PORTAL_AUTH_REQUIRED",
      "createPortal() needs `authenticate(request)`, `secret`, or both: the portal shows each tenant " +
        "its webhooks and secrets, so it never mounts open. Return { tenantId, actor } from your " +
        "app's session in authenticate (null to refuse, or a Response such as a redirect to your " +
        "login page), or give a secret of 32+ characters and send tenants links from portal.link().",
    );
  }
  if (options.authenticate !== undefined && typeof options.authenticate !== "function")
    throw new PortalConfigurationError(
      "PORTAL_INVALID_OPTIONS",
      "createPortal() authenticate must be a function (request) => { tenantId, actor } | null | Response.",
    );
  if (typeof options.postel?.outbound !== "object")
    throw new PortalConfigurationError(
      "PORTAL_INVALID_OPTIONS",
      "createPortal() needs `postel`: a Postel instance configured with `outbound`.",
    );
  if (
    options.csrfSecret !== undefined &&
    (typeof options.csrfSecret !== "string" || options.csrfSecret.length < 32)
  )
    throw new PortalConfigurationError(
      "PORTAL_INVALID_OPTIONS",
      "createPortal() csrfSecret must be at least 32 characters (e.g. `openssl rand -base64 32`).",
    );
  const problem = options.frameAncestors === undefined ? null : frameAncestorsProblem(options.frameAncestors);
  if (problem !== null)
    throw new PortalConfigurationError("PORTAL_INVALID_OPTIONS", `createPortal() ${problem}`);
  const basePath = options.basePath ?? "/";
  const badPath = basePathProblem(basePath);
  if (badPath !== null)
    throw new PortalConfigurationError("PORTAL_INVALID_OPTIONS", `createPortal() ${badPath}`);
  return basePath.replace(/\/+$/, "");
}
