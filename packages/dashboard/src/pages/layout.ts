import { type Html, html } from "@postel/web-kit";
import { href, type PageContext } from "./context.js";

const NAV = [
  ["/", "Live"],
  ["/endpoints", "Endpoints"],
  ["/messages", "Messages"],
  ["/dead-letters", "Dead letters"],
  ["/held-keys", "Held keys"],
  ["/audit", "Audit log"],
] as const;

/** What a `?done=` after an action says (fixed texts: the query string never reaches the page as prose). */
const NOTICES: Record<string, (n: number) => string> = {
  enabled: () => "Endpoint enabled: held deliveries resume.",
  disabled: () => "Endpoint disabled: its deliveries are held until it is enabled.",
  rotated: () => "New signing secret added; the previous one keeps signing during the overlap.",
  skipped: () => "Key skipped: its waiting messages go now; its head stays as it was.",
  replayed: (n) => `Replayed ${n} ${n === 1 ? "delivery" : "deliveries"}.`,
};

/** The page around every view: header, navigation, notice, content. */
export function layout(ctx: PageContext, page: { title: string; body: Html; script?: boolean }): Html {
  const here = ctx.url.pathname.slice(ctx.base.length) || "/";
  const done = ctx.url.searchParams.get("done");
  const notice = done !== null ? NOTICES[done] : undefined;
  const n = Number.parseInt(ctx.url.searchParams.get("n") ?? "0", 10) || 0;
  return html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${page.title} · ${ctx.title}</title>
<link rel="stylesheet" href="${href(ctx, "/assets/dashboard.css")}">
${page.script ? html`<script src="${href(ctx, "/assets/live.js")}" defer></script>` : ""}
</head>
<body>
<header>
<a class="brand" href="${href(ctx, "/")}">${ctx.title}</a>${ctx.operator.role === "read-only" ? html` <span class="badge muted" title="You can see everything and change nothing">read-only</span>` : ""}
<nav>${NAV.map(
    ([path, label]) =>
      html`<a href="${href(ctx, path)}"${isCurrent(here, path) ? html` aria-current="page"` : ""}>${label}</a>`,
  )}</nav>
</header>
<main>
${notice ? html`<p class="notice" role="status">${notice(n)}</p>` : ""}
<h1>${page.title}</h1>
${page.body}
</main>
</body>
</html>`;
}

function isCurrent(here: string, path: string): boolean {
  return path === "/" ? here === "/" : here === path || here.startsWith(`${path}/`);
}

/**
 * A page that says something went wrong (404, 403, 400), with no detail from the request beyond a
 * coded error's own message and code.
 */
export function messagePage(ctx: PageContext, title: string, text: string, code?: string): Html {
  return layout(ctx, {
    title,
    body: html`<p>${text}</p>${code ? html`<p class="muted">Error code <code id="error-code">${code}</code></p>` : ""}<p><a href="${href(ctx, "/")}">Back to the dashboard</a></p>`,
  });
}
