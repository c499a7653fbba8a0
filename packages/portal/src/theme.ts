/**
 * The portal's branding: a title, a logo and colours, all checked when the portal is created. The
 * colours become CSS variables in the portal's own stylesheet, the logo must be served by the app
 * itself (or be a `data:` image), so a themed portal still makes no third-party request and needs
 * no inline style.
 */
import { BASE_STYLESHEET } from "@postel/web-kit";
import { PortalConfigurationError } from "./errors.js";

/** The colours a theme may set; each becomes the CSS variable of the same name (`--accent`, ...). */
export const THEME_COLORS = ["accent", "bg", "fg", "muted", "line", "card", "ok", "warn", "bad"] as const;

/** Options of the portal's look. */
export interface ThemeOptions {
  /** Shown in the header and page titles. Default `"Webhooks"`. */
  title?: string | undefined;
  /** A logo at a path of your app (`"/logo.svg"`) or a `data:image/...` URL; shown 28 px high. */
  logoUrl?: string | undefined;
  /** CSS colours (`#2453c7`, `rgb(36 83 199)`, `hsl(...)`) for light and dark schemes alike. */
  colors?: Partial<Record<(typeof THEME_COLORS)[number], string>> | undefined;
}

/** A checked theme. */
export interface Theme {
  title: string;
  logoUrl: string | null;
  stylesheet: string;
}

const COLOR = /^(#[0-9a-fA-F]{3,8}|(rgb|rgba|hsl|hsla|oklch|oklab)\([0-9.,%\s/+-]+\)|[a-zA-Z]{3,20})$/;

/** Checks `options` and builds the portal's stylesheet with them; throws `PORTAL_INVALID_OPTIONS`. */
export function createTheme(options: ThemeOptions = {}): Theme {
  const fail = (message: string): never => {
    throw new PortalConfigurationError("PORTAL_INVALID_OPTIONS", `createPortal() theme.${message}`);
  };
  const title = options.title ?? "Webhooks";
  if (typeof title !== "string" || title.trim() === "" || title.length > 80)
    fail("title must be a name of 1 to 80 characters.");
  const logo = options.logoUrl ?? null;
  if (
    logo !== null &&
    (typeof logo !== "string" ||
      logo.length > 100_000 ||
      !(
        /^\/(?!\/)[^\s"'<>\\]*$/.test(logo) ||
        /^data:image\/(png|gif|jpeg|webp|svg\+xml)[;,][^\s"'<>]*$/.test(logo)
      ))
  )
    fail(
      'logoUrl must be a path of your own app ("/logo.svg") or a data:image URL: the portal loads ' +
        "nothing from another origin.",
    );
  const colors = options.colors ?? {};
  const declarations: string[] = [];
  for (const [name, value] of Object.entries(colors)) {
    if (!(THEME_COLORS as readonly string[]).includes(name))
      fail(`colors.${name} is not a theme colour: use ${THEME_COLORS.join(", ")}.`);
    if (typeof value !== "string" || !COLOR.test(value))
      fail(`colors.${name} must be a CSS colour such as "#2453c7" or "rgb(36 83 199)".`);
    declarations.push(`--${name}: ${value};`);
  }
  const overrides =
    declarations.length === 0
      ? ""
      : `:root { ${declarations.join(" ")} }\n@media (prefers-color-scheme: dark) { :root { ${declarations.join(" ")} } }\n`;
  return { title, logoUrl: logo, stylesheet: `${BASE_STYLESHEET}${PORTAL_STYLES}${overrides}` };
}

/** What the portal adds to the shared stylesheet: the logo, forms, the event picker, the secret. */
const PORTAL_STYLES = `
.brand { display: inline-flex; align-items: center; gap: .5rem; }
.brand img { height: 28px; width: auto; }
header .who { margin-left: auto; color: var(--muted); font-size: .9em; display: flex; gap: .75rem; align-items: center; }
form.stack { display: grid; gap: .9rem; max-width: 44rem; }
form.stack label, fieldset legend { font-weight: 600; }
form.stack label > span, fieldset .hint { display: block; font-weight: 400; color: var(--muted); font-size: .9em; }
form.stack input[type="url"], form.stack input[type="text"], form.stack textarea, form.stack select { width: 100%; }
textarea { font: inherit; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; padding: .35rem .5rem; border: 1px solid var(--line); border-radius: 4px; background: var(--card); color: var(--fg); min-height: 5rem; }
fieldset { border: 1px solid var(--line); border-radius: 6px; padding: .5rem .75rem .75rem; margin: 0; background: var(--card); }
.picker { display: grid; gap: .35rem; }
.picker h3 { font-size: .9rem; margin: .5rem 0 0; color: var(--muted); }
.picker label { display: grid; grid-template-columns: auto 1fr; gap: 0 .5rem; font-weight: 400; align-items: start; }
.picker label input { margin-top: .3rem; }
.picker .desc { grid-column: 2; color: var(--muted); font-size: .9em; }
.deprecated { color: var(--warn); font-size: .85em; }
.danger-zone { border-color: var(--bad); }
.headers { margin: 0; padding: .25rem .5rem; }
.empty { padding: 1rem; background: var(--card); border: 1px dashed var(--line); border-radius: 6px; }
button.primary { background: var(--accent); color: var(--card); }
.error { border-left: 4px solid var(--bad); padding: .5rem .75rem; background: var(--card); }
@media (max-width: 640px) { header .who { margin-left: 0; width: 100%; } }
`;
