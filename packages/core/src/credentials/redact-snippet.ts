/** Replaces every trace of an endpoint's custom header values in a response snippet. */
export type SnippetRedactor = (snippet: string) => string;

/** What a header value is replaced with in stored response snippets. */
export const REDACTED = "[redacted]";

// Shorter values are too likely to be ordinary words ("json", "yes") to be worth hiding.
const MIN_VALUE_LENGTH = 4;
// A snippet cut off at `maxResponseBytes` may end in the first part of a value: hidden from this length on.
const MIN_TAIL_LENGTH = 8;

/**
 * A function that replaces, in a response snippet, every occurrence of each custom header value of
 * at least 4 characters, also JSON-escaped, URL-encoded (`%20` or `+` for spaces) and in base64 or
 * base64url at any alignment (inside a longer encoded text), with `[redacted]`; and a snippet that
 * ends in the first 8 or more characters of one. Receivers that echo the request (debug endpoints,
 * error pages) would otherwise put the endpoint's `Authorization` into the audit trail. Null when
 * the endpoint has no such header (nothing to do per attempt).
 */
export function snippetRedactor(headers: Readonly<Record<string, string>>): SnippetRedactor | null {
  const forms = new Set<string>();
  for (const value of Object.values(headers)) {
    if (value.length < MIN_VALUE_LENGTH) continue;
    for (const form of encodings(value)) if (form.length >= MIN_VALUE_LENGTH) forms.add(form);
  }
  if (forms.size === 0) return null;
  const longestFirst = [...forms].sort((a, b) => b.length - a.length);
  const pattern = new RegExp(longestFirst.map(escapeRegExp).join("|"), "g");
  return (snippet) => redactTail(snippet.replace(pattern, REDACTED), longestFirst);
}

/** The forms a value may take in a response body. */
function encodings(value: string): string[] {
  const bytes = Buffer.from(value, "utf8");
  const uri = encodeURIComponent(value);
  const forms = [value, JSON.stringify(value).slice(1, -1), uri, uri.replaceAll("%20", "+")];
  // Inside a longer base64 text the value starts at one of three byte offsets mod 3: keep the
  // characters that depend on its bytes alone.
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64");
    const start = Math.ceil((8 * offset) / 6);
    const end = Math.floor((8 * (offset + bytes.length)) / 6);
    const base64 = encoded.slice(start, end);
    forms.push(base64, base64.replaceAll("+", "-").replaceAll("/", "_"));
  }
  return forms;
}

/** The snippet with a trailing start of a form (at least `MIN_TAIL_LENGTH` long) replaced. */
function redactTail(snippet: string, forms: readonly string[]): string {
  let cut = snippet.length;
  for (const form of forms) {
    if (form.length <= MIN_TAIL_LENGTH) continue;
    const tail = snippet.slice(-(form.length - 1));
    const head = form.slice(0, MIN_TAIL_LENGTH);
    for (let at = tail.indexOf(head); at !== -1; at = tail.indexOf(head, at + 1)) {
      if (form.startsWith(tail.slice(at))) {
        cut = Math.min(cut, snippet.length - tail.length + at);
        break;
      }
    }
  }
  return cut === snippet.length ? snippet : `${snippet.slice(0, cut)}${REDACTED}`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
