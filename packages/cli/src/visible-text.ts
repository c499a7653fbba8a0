// What a terminal may act on rather than print: C0 controls (ESC starts clear-screen, title and OSC 52
// clipboard sequences; CR overwrites a line), DEL, C1 controls (U+009B is a one-byte CSI on some
// terminals) and the bidi marks, overrides and isolates that make text read in another order.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

// What JSON.stringify leaves raw inside strings (it escapes C0 itself; outside strings there are only
// its own spaces and line breaks).
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const SHORT: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/**
 * `text` with every character a terminal would act on written out visibly: `\n`, `\r`, `\t`, `\x1b`
 * (C0, DEL and C1 as `\xNN`), `\u202e` (bidi controls). For people, not for parsing back: a backslash
 * already in the text is left as it is.
 */
export function visible(text: string): string {
  return text.replace(UNSAFE, (char) => {
    const code = char.charCodeAt(0);
    return SHORT[char] ?? (code <= 0xff ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`);
  });
}

/**
 * JSON.stringify's text made safe to `cat`, meaning the same value: DEL, C1 and bidi controls, which
 * can only occur inside its strings, escaped as `\uXXXX` there too.
 */
export function terminalSafeJson(json: string): string {
  return json.replace(UNSAFE_IN_JSON, (char) => `\\u${hex(char.charCodeAt(0), 4)}`);
}

function hex(code: number, digits: number): string {
  return code.toString(16).padStart(digits, "0");
}
