import { csrfField, type Html, html } from "@postel/web-kit";
import { href, type PageContext } from "./context.js";

const NAV = [
  ["/", "Endpoints"],
  ["/messages", "Messages"],
  ["/activity", "Activity"],
] as const;

/** What a `?done=` after an action says (fixed texts: the query string never reaches the page as prose). */
const NOTICES: Record<string, (n: number) => string> = {
  created: () => "Endpoint added. Reveal its signing secret to verify what it receives.",
  updated: () => "Endpoint saved.",
  enabled: () => "Endpoint enabled: held deliveries resume.",
  disabled: () => "Endpoint disabled: its deliveries are held until you enable it.",
  deleted: () => "Endpoint deleted.",
  tested: () => "Test event sent. It appears under Messages within seconds.",
  replayed: (n) =>
    n === 0 ? "Nothing to replay: the delivery is still in progress." : "Delivery sent again.",
  recovered: (n) => `Sending ${n} ${n === 1 ? "delivery" : "deliveries"} again.`,
};

/** The frame of every page: skip link, header with the app's brand, navigation, notice, content. */
export function layout(ctx: PageContext, page: { title: string; body: Html }): Html {
  const here = ctx.url.pathname.slice(ctx.base.length) || "/";
  const done = ctx.url.searchParams.get("done");
  const notice = done !== null && Object.hasOwn(NOTICES, done) ? NOTICES[done] : undefined;
  const n = Number.parseInt(ctx.url.searchParams.get("n") ?? "0", 10) || 0;
  return html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${page.title} · ${ctx.theme.title}</title>
<link rel="stylesheet" href="${href(ctx, "/assets/portal.css")}">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
<a class="brand" href="${href(ctx, "/")}">${ctx.theme.logoUrl === null ? "" : html`<img src="${ctx.theme.logoUrl}" alt="">`}${ctx.theme.title}</a>
<nav aria-label="Portal">${NAV.map(
    ([path, label]) =>
      html`<a href="${href(ctx, path)}"${isCurrent(here, path) ? html` aria-current="page"` : ""}>${label}</a>`,
  )}</nav>
<span class="who">${ctx.actor}${
    ctx.linkSession
      ? html`<form method="post" action="${href(ctx, "/sign-out")}" class="inline">${csrfField(ctx.csrfToken)}<button type="submit">Sign out</button></form>`
      : ""
  }</span>
</header>
<main id="main" tabindex="-1">
${notice ? html`<p class="notice" role="status">${notice(n)}</p>` : ""}
<h1>${page.title}</h1>
${page.body}
</main>
</body>
</html>`;
}

function isCurrent(here: string, path: string): boolean {
  return path === "/"
    ? here === "/" || here.startsWith("/endpoints")
    : here === path || here.startsWith(`${path}/`);
}

/** A page that says something went wrong (404, 403, 422, 429), with no detail from the request. */
export function problemPage(ctx: PageContext, title: string, text: string): Html {
  return layout(ctx, {
    title,
    body: html`<p class="error" role="alert">${text}</p><p><a href="${href(ctx, "/")}">Back to your endpoints</a></p>`,
  });
}
