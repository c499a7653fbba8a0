import { type Html, html } from "@postel/web-kit";
import type { Theme } from "../theme.js";

/**
 * The sign-in page's script, served as `assets/sign-in.js` (the CSP allows no inline script): it
 * takes the token from the URL fragment, removes it from the address bar and history, and POSTs it.
 */
export const SIGN_IN_SCRIPT = `(function () {
  var form = document.getElementById("sign-in");
  var field = document.getElementById("token");
  var match = /(?:^#|&)token=([A-Za-z0-9._-]+)/.exec(location.hash);
  history.replaceState(null, "", location.pathname);
  if (!form || !field) return;
  if (!match) {
    document.getElementById("status").textContent = "This link is incomplete. Open the whole link you were given, or ask for a new one.";
    return;
  }
  field.value = match[1];
  form.submit();
})();
`;

/** A page outside any tenant (sign-in, signed out, a refused link), in the portal's theme. */
export function standalonePage(base: string, theme: Theme, title: string, body: Html, script = false): Html {
  return html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · ${theme.title}</title>
<link rel="stylesheet" href="${base}/assets/portal.css">
${script ? html`<script src="${base}/assets/sign-in.js" defer></script>` : ""}
</head>
<body>
<header><span class="brand">${theme.logoUrl === null ? "" : html`<img src="${theme.logoUrl}" alt="">`}${theme.title}</span></header>
<main id="main">
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}

/** The page a portal link opens: its script submits the token from the fragment. */
export function signInPage(base: string, theme: Theme): Html {
  return standalonePage(
    base,
    theme,
    "Signing you in",
    html`<p id="status" role="status">One moment…</p>
<form method="post" action="${base}/sign-in" id="sign-in"><input type="hidden" name="token" id="token"></form>
<noscript><p>Signing in by link needs JavaScript: the link's token never leaves your browser in a URL.</p></noscript>`,
    true,
  );
}
