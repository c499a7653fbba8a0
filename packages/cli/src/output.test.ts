import { expect, test } from "vitest";
import { type Column, Output } from "./output.js";

function capture(tty: { isTTY?: boolean; columns?: number }, env: NodeJS.ProcessEnv = {}) {
  const text = { stdout: "", stderr: "" };
  const stdout = { ...tty, write: (s: string) => (text.stdout += s) };
  const stderr = { write: (s: string) => (text.stderr += s) };
  return { out: new Output(stdout, stderr, env, false), text };
}

type Row = { id: string; url: string; state: string };
const columns: Column<Row>[] = [
  { header: "ID", cell: (r) => r.id },
  { header: "URL", cell: (r) => r.url, shrink: true },
  { header: "STATE", cell: (r) => r.state },
];
const rows: Row[] = [
  { id: "ep_1", url: "https://example.com/a/very/long/path/to/the/webhook/receiver", state: "active" },
  { id: "ep_22", url: "https://b.example", state: "disabled" },
];

test("a table is aligned and left whole when stdout is not a terminal", () => {
  const { out, text } = capture({});
  out.table(columns, rows);
  expect(text.stdout).toBe(
    [
      "ID     URL                                                           STATE",
      "ep_1   https://example.com/a/very/long/path/to/the/webhook/receiver  active",
      "ep_22  https://b.example                                             disabled",
      "",
    ].join("\n"),
  );
});

test("on a terminal, the shrinkable column is cut with … to the terminal's width", () => {
  const { out, text } = capture({ isTTY: true, columns: 40 }, { NO_COLOR: "1" });
  out.table(columns, rows);
  const lines = text.stdout.trimEnd().split("\n");
  expect(lines.map((line) => line.length)).toEqual([37, 38, 40]);
  expect(lines[1]).toBe("ep_1   https://example.com/a/…  active");
});

test("colour only on a terminal without NO_COLOR", () => {
  const coloured = capture({ isTTY: true, columns: 200 });
  coloured.out.table(columns, rows);
  expect(coloured.text.stdout).toContain("\x1b[32mactive");
  const plain = capture({ isTTY: true, columns: 200 }, { NO_COLOR: "1" });
  plain.out.table(columns, rows);
  expect(plain.text.stdout).not.toContain("\x1b[");
});

// What a hostile receiver or endpoint description may carry: clear screen, an OSC 52 clipboard write,
// a title set, a carriage return that overwrites the line, C1 CSI, DEL and a right-to-left override.
const EVIL = "a\x1b[2Jb\x1b]52;c;ZXZpbA==\x07c\x1b]0;pwned\x07d\re\nf\tg\x9b31m\x7fh\u202ei\u2066j\u200fk";
const SHOWN =
  "a\\x1b[2Jb\\x1b]52;c;ZXZpbA==\\x07c\\x1b]0;pwned\\x07d\\re\\nf\\tg\\x9b31m\\x7fh\\u202ei\\u2066j\\u200fk";
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

test("every value in tables, fields, lines, notes and failures shows its controls visibly", () => {
  const { out, text } = capture({});
  out.table(columns, [{ id: "ep_1", url: EVIL, state: "active" }]);
  out.fields([["description", EVIL]]);
  out.heading(EVIL);
  out.text(`line ${EVIL}`);
  out.note(`note ${EVIL}`);
  // A failure's message keeps its own line breaks (Postel's messages list problems a line each).
  out.failure({ code: "X", message: `first ${EVIL.replace("\n", "")}\nsecond line`, exitCode: 1 });
  for (const stream of [text.stdout, text.stderr]) expect(stream).not.toMatch(RAW);
  expect(text.stdout).toContain(`ep_1  ${SHOWN}  active\n`);
  expect(text.stdout).toMatch(new RegExp(`description  ${SHOWN.replace(/[\\[\]]/g, "\\$&")}\n`));
  expect(text.stdout).toContain(`\n${SHOWN}\nline ${SHOWN}\n`);
  expect(text.stderr).toBe(`note ${SHOWN}\npostel: X: first ${SHOWN.replace("\\n", "")}\nsecond line\n`);
});

test("--json stays the same JSON, with C1, DEL and bidi controls escaped as \\uXXXX too", () => {
  const text = { stdout: "", stderr: "" };
  const out = new Output(
    { write: (s: string) => (text.stdout += s) },
    { write: (s: string) => (text.stderr += s) },
    {},
    true,
  );
  out.data({ body: EVIL });
  out.data({ body: EVIL }, true);
  out.failure({ code: "X", message: EVIL, exitCode: 4 });
  expect(text.stdout + text.stderr).not.toMatch(RAW);
  const [pretty, line] = [
    text.stdout.slice(0, text.stdout.lastIndexOf("{")),
    text.stdout.slice(text.stdout.lastIndexOf("{")),
  ];
  expect(JSON.parse(pretty)).toEqual({ body: EVIL });
  expect(JSON.parse(line)).toEqual({ body: EVIL });
  expect(line).toContain("\\u009b31m\\u007fh\\u202ei");
  expect(JSON.parse(text.stderr)).toEqual({ error: { code: "X", message: EVIL, exitCode: 4 } });
});

test("on a terminal, only the colours paint() adds reach it: an injected one is shown", () => {
  const { out, text } = capture({ isTTY: true, columns: 200 });
  out.text(`${out.paint("success", "green")} \x1b[32mfake\x1b[0m \x1b[2J`);
  expect(text.stdout).toBe("\x1b[32msuccess\x1b[0m \x1b[32mfake\x1b[0m \\x1b[2J\n");
  const plain = capture({ isTTY: true, columns: 200 }, { NO_COLOR: "1" });
  plain.out.text(`\x1b[32mfake\x1b[0m`);
  expect(plain.text.stdout).toBe("\\x1b[32mfake\\x1b[0m\n");
});
