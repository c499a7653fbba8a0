import { type Clock, InvalidInputError, isPostelError, PostelError, systemClock } from "@postel/core";
import {
  BodyTooLargeError,
  basePathProblem,
  createCsrf,
  guardedHandler,
  type Html,
  readBodyText,
} from "@postel/web-kit";
import { type Action, endpointActions, replayMessage } from "./actions.js";
import { auditTrail } from "./audit-trail.js";
import { replayMatching, replaySelected } from "./bulk-replay.js";
import { type AuthorizeVerdict, type Operator, operatorOf } from "./grant.js";
import { LIVE_SCRIPT } from "./assets/live-script.js";
import { STYLESHEET } from "./assets/stylesheet.js";
import { type DashboardPostel, operations } from "./ops.js";
import type { PageContext } from "./pages/context.js";
import { auditPage } from "./pages/audit.js";
import { deadLettersPage } from "./pages/dead-letters.js";
import { heldKeysPage } from "./pages/held-keys.js";
import { endpointPage, endpointsPage } from "./pages/endpoints.js";
import { messagePage as errorPage } from "./pages/layout.js";
import { livePage, liveJson } from "./pages/live.js";
import { messagePage, messagesPage } from "./pages/messages.js";
import { responder } from "./respond.js";
import { skipHeldKey } from "./skip-held-key.js";

/** Options of `createDashboard`. */
export interface DashboardOptions {
  /** The Postel instance whose outbox the dashboard shows (it uses `postel.outbound` only). */
  postel: DashboardPostel;
  /**
   * Decides who may see and operate the dashboard; required. Called for every request (pages, assets,
   * actions) with the Web `Request`. Return `true` for an admin, a `DashboardGrant`
   * (`{ role: "admin" | "read-only", actor? }`: a read-only operator sees every page and changes
   * nothing; `actor` names them in the audit log), `false` for a plain 403, or a `Response` of your
   * own (e.g. a redirect to your login page).
   */
  authorize: (request: Request) => AuthorizeVerdict | Promise<AuthorizeVerdict>;
  /** The path the dashboard is mounted at, e.g. `"/postel"`. Default `"/"`. */
  basePath?: string | undefined;
  /**
   * Key of the CSRF tokens, at least 32 characters. Default: random per `createDashboard` call, so
   * set it when several instances serve the dashboard behind one load balancer.
   */
  csrfSecret?: string | undefined;
  /** Shown in the header and the page titles. Default `"Postel"`. */
  title?: string | undefined;
  /** Called with what a page or action threw (the operator sees a 500 page). Default `console.error`. */
  onError?: ((error: unknown, request: Request) => void) | undefined;
  /** The clock for "now" (tests pass `ManualClock`). */
  clock?: Clock | undefined;
}

/** The dashboard: a Web-standard handler, and the path it expects to be mounted at. */
export interface Dashboard {
  (request: Request): Promise<Response>;
  /** The mount path without a trailing slash (`""` at the root). */
  readonly basePath: string;
}

/** The dashboard was given options it cannot run with. Codes `DASHBOARD_AUTHORIZE_REQUIRED`, `DASHBOARD_INVALID_OPTIONS`. */
export class DashboardConfigurationError extends PostelError {}

/**
 * Creates the dashboard: a `(Request) => Promise<Response>` handler that serves its pages, actions
 * and assets under `basePath`. Refuses to be created without `authorize`.
 * @example
 * const dashboard = createDashboard({ postel, basePath: "/postel", authorize: (request) => isAdmin(request) });
 */
export function createDashboard(options: DashboardOptions): Dashboard {
  const base = checkOptions(options);
  const csrf = createCsrf({ secret: options.csrfSecret, cookieName: "postel_dashboard_csrf" });
  const clock = options.clock ?? systemClock;
  const ops = operations(options.postel);
  const trail = auditTrail(ops.auditLog);
  const onError = options.onError ?? ((error) => console.error("[postel] dashboard request failed:", error));
  const title = options.title ?? "Postel";

  const serve = async (request: Request, operator: Operator, path: string): Promise<Response> => {
    const { token, setCookie } = await csrf.issue(request, base || "/");
    const url = new URL(request.url);
    const ctx: PageContext = { ops, base, url, csrfToken: token, now: clock.now(), title, operator, trail };
    const page = (html: Html, status = 200) =>
      responder.html(html, status, setCookie === null ? [] : [setCookie]);
    const json = path.endsWith(".json");
    const failed = (status: number, heading: string, text: string, code?: string) =>
      json
        ? responder.json({ error: { code: code ?? "ERROR", message: text } }, status)
        : page(errorPage(ctx, heading, text, code), status);
    try {
      let answer: Response | Html | null;
      if (request.method === "POST") {
        // Whatever the form carries, a read-only operator changes nothing (its body is not even read).
        if (operator.role !== "admin") return page(errorPage(ctx, "Not allowed", READ_ONLY), 403);
        const form = new URLSearchParams(await readBodyText(request));
        const refused = await csrf.check(request, form);
        if (refused !== null) return page(errorPage(ctx, "Refused", REFUSED[refused]), 403);
        answer = await post(ctx, path, form);
      } else {
        answer = await get(ctx, path);
      }
      if (answer instanceof Response) return answer;
      return answer === null ? failed(404, "Not found", "There is nothing here.", "NOT_FOUND") : page(answer);
    } catch (error) {
      if (isPostelError(error) && (error.code.endsWith("_NOT_FOUND") || error.code === "KEY_NOT_HELD"))
        return failed(404, "Not found", error.message, error.code);
      if (isPostelError(error) && error.code === "INVALID_CURSOR")
        return failed(400, "Not a page of this list", BAD_CURSOR, error.code);
      if (error instanceof InvalidInputError) return failed(400, "Cannot do that", error.message, error.code);
      if (error instanceof BodyTooLargeError) throw error;
      onError(error, request);
      return failed(500, "Something failed", "The server could not answer; its log says why.", "INTERNAL");
    }
  };
  const handle = guardedHandler<Operator>({
    basePath: base,
    methods: ["GET", "HEAD", "POST"],
    responder,
    onError,
    // Anything but `true` or a grant (a throw included) lets nobody in; a Response of the app's own
    // goes out as it is.
    identify: async (request) => {
      const verdict = await options.authorize(request);
      return verdict instanceof Response ? verdict : operatorOf(verdict);
    },
    serve,
  });
  return Object.assign(handle, { basePath: base });
}

const READ_ONLY =
  "Your access to this dashboard is read-only: it shows everything and changes nothing. Nothing was changed.";

const BAD_CURSOR =
  "This page's cursor is not one the dashboard made (a link cut short, or copied from another list). " +
  "Open the list again from its first page.";

const REFUSED = {
  "cross-site": "This form was sent from another site. Nothing was changed.",
  "missing-token":
    "This form carried no dashboard token. Reload the page and try again; nothing was changed.",
  "bad-token":
    "This form's dashboard token is not valid. Reload the page and try again; nothing was changed.",
};

async function get(ctx: PageContext, path: string): Promise<Response | Html | null> {
  if (path === "/assets/dashboard.css") return responder.asset(STYLESHEET, "text/css; charset=utf-8");
  if (path === "/assets/live.js") return responder.asset(LIVE_SCRIPT, "text/javascript; charset=utf-8");
  if (path === "/live.json") return responder.json(await liveJson(ctx));
  if (path === "/") return livePage(ctx);
  if (path === "/endpoints") return endpointsPage(ctx);
  if (path === "/messages") return messagesPage(ctx);
  if (path === "/dead-letters") return deadLettersPage(ctx);
  if (path === "/held-keys") return heldKeysPage(ctx);
  if (path === "/audit") return auditPage(ctx);
  const [section, id, rest] = segments(path);
  if (id === undefined || rest !== undefined) return null;
  if (section === "endpoints") return endpointPage(ctx, id);
  if (section === "messages") return messagePage(ctx, id);
  return null;
}

async function post(ctx: PageContext, path: string, form: URLSearchParams): Promise<Response | Html | null> {
  if (path === "/dead-letters/replay") return replaySelected(ctx, form, "");
  if (path === "/dead-letters/replay-all") return replayMatching(ctx, form, "");
  if (path === "/held-keys/skip") return skipHeldKey(ctx, form, "");
  const [section, id, verb, rest] = segments(path);
  if (id === undefined || verb === undefined || rest !== undefined) return null;
  const action: Action | undefined =
    section === "endpoints"
      ? Object.hasOwn(endpointActions, verb)
        ? endpointActions[verb]
        : undefined
      : section === "messages" && verb === "replay"
        ? replayMessage
        : undefined;
  return action ? action(ctx, form, id) : null;
}

/** `/endpoints/ep_1/enable` → `["endpoints", "ep_1", "enable"]`, each segment decoded. */
function segments(path: string): string[] {
  try {
    return path.slice(1).split("/").map(decodeURIComponent);
  } catch {
    return [];
  }
}

function checkOptions(options: DashboardOptions): string {
  if (typeof options?.authorize !== "function") {
    throw new DashboardConfigurationError(
      "DASHBOARD_AUTHORIZE_REQUIRED",
      "createDashboard() needs an `authorize(request)` function: the dashboard shows every webhook and can " +
        "replay them, so it never mounts open. Pass e.g. `authorize: (request) => isAdmin(request)` " +
        "(return true, false, or a Response such as a redirect to your login page).",
    );
  }
  if (typeof options.postel?.outbound !== "object") {
    throw new DashboardConfigurationError(
      "DASHBOARD_INVALID_OPTIONS",
      "createDashboard() needs `postel`: a Postel instance configured with `outbound`.",
    );
  }
  const basePath = options.basePath ?? "/";
  const badPath = basePathProblem(basePath);
  if (badPath !== null)
    throw new DashboardConfigurationError("DASHBOARD_INVALID_OPTIONS", `createDashboard() ${badPath}`);
  if (options.csrfSecret !== undefined && options.csrfSecret.length < 32) {
    throw new DashboardConfigurationError(
      "DASHBOARD_INVALID_OPTIONS",
      "createDashboard() csrfSecret must be at least 32 characters (e.g. 32 random bytes, base64).",
    );
  }
  return basePath.replace(/\/+$/, "");
}
