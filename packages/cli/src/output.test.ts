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
