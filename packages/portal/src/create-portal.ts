import { basePathProblem, createResponder, frameAncestorsProblem, guardedHandler } from "@postel/web-kit";
import { serveApi } from "./api.js";
import { PortalConfigurationError } from "./errors.js";
import { type PortalOutbound, type TenantLimits, tenantScope } from "./scope.js";

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
   * Resolves the tenant (and an actor name) from your app's own session, for every request.
   * Return null to refuse (a plain 403), or a Response of your own (a redirect to your login page).
   */
  authenticate: (
    request: Request,
  ) => Promise<PortalCaller | null | Response> | PortalCaller | null | Response;
  /** The path the portal is mounted at, e.g. `"/webhooks"`. Default `"/"`. */
  basePath?: string | undefined;
  /** Per-tenant limits. */
  limits?: Partial<TenantLimits> | undefined;
  /** Origins allowed to frame the portal (`'self'`, `https://app.example.com`); default none. */
  frameAncestors?: readonly string[] | undefined;
  /** Told what a request threw (the client gets a plain 500). Default `console.error`. */
  onError?: ((error: unknown, request: Request) => void) | undefined;
}

/** The portal: a Web-standard handler, and the path it expects to be mounted at. */
export interface Portal {
  (request: Request): Promise<Response>;
  /** The mount path without a trailing slash (`""` at the root). */
  readonly basePath: string;
}

/**
 * Creates the customer portal's handler: its JSON API under `<basePath>/api/`, each request scoped
 * to the tenant `authenticate` resolves. Refuses to be created without `authenticate`.
 * @example
 * const portal = createPortal({ postel, basePath: "/webhooks", authenticate: (request) => tenantOf(request) });
 */
export function createPortal(options: PortalOptions): Portal {
  const basePath = checkOptions(options);
  const responder = createResponder({ frameAncestors: options.frameAncestors });
  const limits: TenantLimits = { maxEndpoints: options.limits?.maxEndpoints ?? 20 };
  const handle = guardedHandler<PortalCaller>({
    basePath,
    methods: ["GET", "HEAD", "POST", "PATCH", "DELETE"],
    responder,
    onError: options.onError ?? ((error) => console.error("[postel] portal request failed:", error)),
    identify: async (request) => {
      const caller = await options.authenticate(request);
      if (caller instanceof Response || caller === null) return caller;
      if (typeof caller?.tenantId !== "string" || caller.tenantId === "" || typeof caller.actor !== "string")
        throw new PortalConfigurationError(
          "PORTAL_INVALID_CALLER",
          "authenticate() must return { tenantId, actor } (non-empty tenantId), null, or a Response.",
        );
      return caller;
    },
    serve: async (request, caller, path) => {
      const scope = tenantScope(options.postel.outbound, caller.tenantId, limits);
      const answer = path.startsWith("/api/")
        ? await serveApi(request, scope, path.slice(5), responder)
        : null;
      return answer ?? responder.json({ error: { code: "NOT_FOUND", message: "No such route." } }, 404);
    },
  });
  return Object.assign(handle, { basePath });
}

function checkOptions(options: PortalOptions): string {
  if (typeof options?.authenticate !== "function") {
    throw new PortalConfigurationError(
      "PORTAL_AUTH_REQUIRED",
      "createPortal() needs `authenticate(request)`: the portal shows each tenant its webhooks and " +
        "secrets, so it never mounts open. Return { tenantId, actor } from your app's session, null " +
        "to refuse, or a Response such as a redirect to your login page.",
    );
  }
  if (typeof options.postel?.outbound !== "object")
    throw new PortalConfigurationError(
      "PORTAL_INVALID_OPTIONS",
      "createPortal() needs `postel`: a Postel instance configured with `outbound`.",
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
