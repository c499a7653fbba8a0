/**
 * The portal's pages and forms, on the same `TenantScope` as the JSON API: a GET renders, a POST
 * changes something and redirects (303) to the page that shows the result. A tenant's bad input
 * re-renders the form with the endpoints API's own message; another tenant's id is a 404 page.
 */
import { InvalidInputError } from "@postel/core";
import { type Html, parseUtc } from "@postel/web-kit";
import type { TenantEndpointInput } from "../scope.js";
import { activityPage } from "./activity.js";
import { href, type PageContext, seg } from "./context.js";
import {
  type EndpointFormValues,
  endpointFormPage,
  endpointPage,
  endpointsPage,
  recoverConfirmPage,
} from "./endpoints.js";
import { messagePage, messagesPage } from "./messages.js";

/**
 * Every page and form, as `METHOD path` with `:id` for ids (for tests and the bench); the forms
 * answer POST only, the pages GET and HEAD.
 */
export const PAGE_ROUTES = [
  "GET /",
  "GET /endpoints/new",
  "GET /endpoints/:id",
  "GET /endpoints/:id/edit",
  "GET /messages",
  "GET /messages/:id",
  "GET /activity",
  "POST /endpoints",
  "POST /endpoints/:id",
  "POST /endpoints/:id/disable",
  "POST /endpoints/:id/enable",
  "POST /endpoints/:id/delete",
  "POST /endpoints/:id/reveal-secret",
  "POST /endpoints/:id/rotate-secret",
  "POST /endpoints/:id/test",
  "POST /endpoints/:id/recover",
  "POST /messages/:id/deliveries/:id/replay",
] as const;

/** A page, a page with another status than 200, a redirect, or null for no such page. */
export type PageAnswer = Html | { status: number; body: Html } | { redirect: string } | null;

/** Renders the page at `path` (below the base path) for the tenant of `ctx`. */
export async function getPage(ctx: PageContext, path: string): Promise<PageAnswer> {
  if (path === "/") return endpointsPage(ctx);
  if (path === "/endpoints") return { redirect: href(ctx, "/") };
  if (path === "/endpoints/new") return endpointFormPage(ctx, null);
  if (path === "/messages") return messagesPage(ctx);
  if (path === "/activity") return activityPage(ctx);
  const parts = segments(path);
  if (parts[0] === "endpoints" && parts.length === 2) return endpointPage(ctx, parts[1]!);
  if (parts[0] === "endpoints" && parts.length === 3 && parts[2] === "edit")
    return endpointFormPage(ctx, await ctx.scope.endpoint(parts[1]!));
  if (parts[0] === "messages" && parts.length === 2) return messagePage(ctx, parts[1]!);
  return null;
}

/**
 * Runs the form POSTed to `path`. Input errors (`InvalidInputError`) of the endpoint form are
 * answered by the form itself, with the values sent; the caller maps every other error to a page.
 */
export async function postForm(ctx: PageContext, path: string, form: URLSearchParams): Promise<PageAnswer> {
  const { scope } = ctx;
  const parts = segments(path);
  const done = (to: string, what: string, n?: number) => ({
    redirect: href(ctx, to, { done: what, n: n === undefined ? undefined : String(n) }),
  });
  if (path === "/endpoints" || (parts[0] === "endpoints" && parts.length === 2)) {
    const existing = path === "/endpoints" ? null : await scope.endpoint(parts[1]!);
    const values = formValues(form);
    const input = endpointInput(values);
    // The form answers its own input errors, with what was sent, so nothing typed is lost.
    const again = (error: string) => ({ status: 422, body: endpointFormPage(ctx, existing, values, error) });
    if (typeof input === "string") return again(input);
    try {
      const saved =
        existing === null
          ? await scope.createEndpoint(input)
          : await scope.updateEndpoint(existing.id, input);
      return done(`/endpoints/${seg(saved.id)}`, existing === null ? "created" : "updated");
    } catch (error) {
      if (error instanceof InvalidInputError) return again(error.message);
      throw error;
    }
  }
  if (parts[0] === "endpoints" && parts.length === 3) {
    const [, id, verb] = parts as [string, string, string];
    const page = `/endpoints/${seg(id)}`;
    switch (verb) {
      case "disable":
        await scope.disableEndpoint(id);
        return done(page, "disabled");
      case "enable":
        await scope.enableEndpoint(id);
        return done(page, "enabled");
      case "delete":
        if (form.get("confirm") !== "1") return { redirect: href(ctx, page) };
        await scope.deleteEndpoint(id);
        return done("/", "deleted");
      case "reveal-secret":
        // Shown in the response to the POST itself: never in a URL, never cached (no-store).
        return endpointPage(ctx, id, await scope.revealSecret(id));
      case "rotate-secret":
        return endpointPage(ctx, id, await scope.rotateSecret(id, form.get("overlap") ?? "24h"));
      case "test":
        await scope.sendTest(id, form.get("type") ?? "");
        return done(page, "tested");
      case "recover": {
        const since = parseUtc(form.get("since")) ?? Number.NaN;
        if (form.get("confirm") !== "1")
          return recoverConfirmPage(ctx, id, since, await scope.recoverCount(id, since));
        return done(page, "recovered", await scope.recover(id, since));
      }
    }
    return null;
  }
  if (parts[0] === "messages" && parts.length === 5 && parts[2] === "deliveries" && parts[4] === "replay") {
    const replayed = await scope.replayDelivery(parts[1]!, parts[3]!);
    return done(`/messages/${seg(parts[1]!)}`, "replayed", replayed);
  }
  return null;
}

function formValues(form: URLSearchParams): EndpointFormValues {
  const types = form
    .getAll("types")
    .flatMap((value) => value.split(","))
    .map((value) => value.trim())
    .filter((value) => value !== "");
  return {
    url: (form.get("url") ?? "").trim(),
    description: (form.get("description") ?? "").trim(),
    types,
    filter: (form.get("filter") ?? "").trim(),
  };
}

/** The endpoint input of a form, or what is wrong with the part only the form can check (the filter's JSON). */
function endpointInput(values: EndpointFormValues): TenantEndpointInput | string {
  let filter: TenantEndpointInput["filter"] = null;
  if (values.filter !== "") {
    try {
      const parsed: unknown = JSON.parse(values.filter);
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error();
      filter = parsed as TenantEndpointInput["filter"];
    } catch {
      return 'The filter must be a JSON object, such as {"data.amount": {"$gte": 100}}.';
    }
  }
  return {
    url: values.url,
    types: values.types.includes("*") ? ["*"] : values.types,
    description: values.description === "" ? null : values.description,
    filter,
  };
}

/** `/endpoints/ep_1/enable` → `["endpoints", "ep_1", "enable"]`, each segment decoded. */
function segments(path: string): string[] {
  try {
    return path.slice(1).split("/").map(decodeURIComponent);
  } catch {
    return [];
  }
}
