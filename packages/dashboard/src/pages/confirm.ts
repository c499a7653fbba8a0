import { type Html, html } from "@postel/web-kit";
import type { PageContext } from "./context.js";
import { csrfField } from "./format.js";
import { layout } from "./layout.js";

/**
 * Step one of a bulk action: what it will do and to how many, and the form that does it (its hidden
 * `fields` select the same rows again and carry the one-time nonce). With `count` 0, no form.
 */
export function confirmPage(
  ctx: PageContext,
  page: {
    title: string;
    count: number;
    text: Html;
    action: string;
    fields: (readonly [string, string])[];
    button: string;
    back: string;
  },
): Html {
  const form =
    page.count === 0
      ? ""
      : html`<form method="post" action="${page.action}" class="actions" id="confirm">${csrfField(ctx)}${page.fields.map(
          ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
        )}<button type="submit" class="danger">${page.button}</button> <a href="${page.back}">Cancel</a></form>`;
  const body = html`<p id="confirm-count" data-count="${page.count}">${page.text}</p>
${form || html`<p><a href="${page.back}">Back</a></p>`}`;
  return layout(ctx, { title: page.title, body });
}

/** The answer to a confirmation sent again: it ran once already; where to see what it did. */
export function alreadyDonePage(
  ctx: PageContext,
  page: { text: string; links: [href: string, label: string][] },
): Html {
  const body = html`<p class="notice warn" role="status">${page.text}</p>
<p>${page.links.map(([to, label], i) => html`${i > 0 ? " · " : ""}<a href="${to}">${label}</a>`)}</p>`;
  return layout(ctx, { title: "Already done", body });
}
