/**
 * The dashboard's only way to produce markup: a tagged template that escapes every interpolated
 * value unless it is already `Html` (another template's output). Nothing user-controlled can reach
 * the page unescaped without passing through `trustedHtml()`, which only this package calls, on
 * constants.
 */

/** Markup that is safe to send: the output of `html` or of `trustedHtml`. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "`": "&#96;",
};

/** Escapes text for an HTML text node or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (char) => ENTITIES[char]!);
}

function render(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (value === null || value === undefined || value === false) return "";
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

/**
 * Builds markup: `html\`<td>${endpoint.description}</td>\`` escapes the description. Arrays render
 * item by item; `null`, `undefined` and `false` render nothing, so `${cond && html\`…\`}` works.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new Html(out);
}

/** Marks a constant string of markup as safe. Never call it on anything that came from a request or the database. */
export function trustedHtml(text: string): Html {
  return new Html(text);
}
