import type { Failure } from "./exit-codes.js";
import { terminalSafeJson, visible } from "./visible-text.js";

/** A stream the CLI writes to (process.stdout or a test double). */
export interface Stream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** One column of a table: its header and how to read a cell from a row. */
export interface Column<Row> {
  header: string;
  cell(row: Row): string | number | null | undefined;
  /** The column that gives up width first when the table is wider than the terminal. */
  shrink?: boolean;
}

const MIN_WIDTH = 8;

// Words that mean good, waiting or bad, wherever they appear (states, statuses, outcomes).
const TONE: Record<string, "green" | "yellow" | "red"> = {
  OK: "green",
  FAIL: "red",
  active: "green",
  dispatched: "green",
  succeeded: "green",
  success: "green",
  pending: "yellow",
  held: "yellow",
  retryable: "yellow",
  "circuit-open": "yellow",
  disabled: "red",
  "dead-lettered": "red",
  failed: "red",
  permanent: "red",
  expired: "red",
};
const ANSI = { bold: 1, dim: 2, red: 31, green: 32, yellow: 33 } as const;

// paint()'s own colour sequences: the only escape sequences a line may carry to the terminal.
const OWN_COLOURS = new RegExp(`(\x1b\\[(?:${[0, ...Object.values(ANSI)].join("|")})m)`);

/**
 * Everything a command prints, and the one place that makes it safe for a terminal. Tables, key/value
 * blocks, lines and notes for people, every value in them with its control and bidi characters
 * written out visibly (`\x1b`, `\r`, `\n`, `\u202e`: see `visible`), so a receiver's response or an
 * endpoint's description can never clear the screen, set the title, write the clipboard or reorder
 * a line; only the CLI's own line breaks and colours reach the terminal. With `--json`, one JSON
 * document (or NDJSON lines, for `tail`) whose text is as safe. Colour only on a terminal, and never
 * with NO_COLOR.
 */
export class Output {
  readonly json: boolean;
  readonly #stdout: Stream;
  readonly #stderr: Stream;
  readonly #colour: boolean;

  constructor(stdout: Stream, stderr: Stream, env: NodeJS.ProcessEnv, json: boolean) {
    this.#stdout = stdout;
    this.#stderr = stderr;
    this.json = json;
    this.#colour = stdout.isTTY === true && !env["NO_COLOR"] && env["TERM"] !== "dumb";
  }

  /** A JSON document (pretty) or, with `line`, one NDJSON line. */
  data(value: unknown, line = false): void {
    const json = line ? JSON.stringify(value) : JSON.stringify(value, null, 2);
    this.#stdout.write(`${terminalSafeJson(json)}\n`);
  }

  /** Lines of text on stdout, one per argument (a line break inside one is shown as `\n`). */
  text(...lines: string[]): void {
    this.#write(
      this.#stdout,
      lines.map((line) => this.#safe(line)),
    );
  }

  /** A hint for the person at the terminal: stderr, so pipes get only the data. Lines as `text`. */
  note(...lines: string[]): void {
    this.#write(
      this.#stderr,
      lines.map((line) => this.#safe(line)),
    );
  }

  /**
   * A failure on stderr: `postel: <code>: <message>`, the message's own lines kept; with `--json`,
   * `{"error":{"code","message","exitCode"}}` on one line.
   */
  failure({ code, message, exitCode }: Failure): void {
    if (this.json) {
      this.#stderr.write(`${terminalSafeJson(JSON.stringify({ error: { code, message, exitCode } }))}\n`);
      return;
    }
    this.#write(this.#stderr, `postel: ${code}: ${message}`.split("\n").map(visible));
  }

  /**
   * Something the command could not do besides its work, which still succeeded: one line on stderr,
   * `postel: warning: <code>: <message>`; with `--json`, `{"warning":{"code","message"}}`.
   */
  warning({ code, message }: { code: string; message: string }): void {
    if (this.json) {
      this.#stderr.write(`${terminalSafeJson(JSON.stringify({ warning: { code, message } }))}\n`);
      return;
    }
    this.#write(this.#stderr, [visible(`postel: warning: ${code}: ${message}`)]);
  }

  /** A question on stderr, the answer to be typed after it on the same line. */
  ask(question: string): void {
    this.#stderr.write(visible(question));
  }

  /** Whether stderr is a terminal (progress redraws in place there). */
  get stderrIsTTY(): boolean {
    return this.#stderr.isTTY === true;
  }

  /** A progress line redrawn in place on stderr (`\r`, no line break until `done`). */
  redraw(line: string, done: boolean): void {
    this.#stderr.write(`\r${visible(line)}${done ? "\n" : ""}`);
  }

  /** An aligned table; on a terminal, shrunk (with `…`) to its width. */
  table<Row>(columns: Column<Row>[], rows: Row[]): void {
    if (rows.length === 0) return;
    const headers = columns.map((column) => visible(column.header));
    const cells = rows.map((row) => columns.map((column) => cellText(column.cell(row))));
    const widths = headers.map((header, i) => Math.max(header.length, ...cells.map((r) => r[i]!.length)));
    if (this.#stdout.isTTY && this.#stdout.columns) fit(widths, columns, this.#stdout.columns);
    const line = (values: string[], header: boolean) =>
      values
        .map((value, i) => {
          const cell = truncate(value, widths[i]!);
          const padded = i === values.length - 1 ? cell : cell.padEnd(widths[i]!);
          return header ? this.paint(padded, "bold") : this.paint(padded, TONE[value]);
        })
        .join("  ")
        .trimEnd();
    this.#write(this.#stdout, [line(headers, true), ...cells.map((r) => line(r, false))]);
  }

  /** `key  value` lines, keys aligned; null values are left out. */
  fields(entries: [string, string | number | null | undefined][]): void {
    const shown = entries
      .filter(([, value]) => value !== null && value !== undefined)
      .map(([key, value]) => [visible(key), visible(String(value))] as const);
    const width = Math.max(...shown.map(([key]) => key.length));
    this.#write(
      this.#stdout,
      shown.map(
        ([key, value]) => `${this.paint(key.padEnd(width), "dim")}  ${this.paint(value, TONE[value])}`,
      ),
    );
  }

  /** A section heading between blocks. */
  heading(title: string): void {
    this.#write(this.#stdout, ["", this.paint(visible(title), "bold")]);
  }

  /** `text` (made visible) in a colour, when colour is on. */
  paint(text: string, style: keyof typeof ANSI | undefined): string {
    const shown = visible(text);
    if (!this.#colour || style === undefined) return shown;
    return `\x1b[${ANSI[style]}m${shown}\x1b[0m`;
  }

  // Every character made visible but the colours paint() added (callers compose painted words into
  // their lines), and those only while colour is on.
  #safe(line: string): string {
    if (!this.#colour) return visible(line);
    return line
      .split(OWN_COLOURS)
      .map((part, i) => (i % 2 === 1 ? part : visible(part)))
      .join("");
  }

  #write(stream: Stream, lines: string[]): void {
    stream.write(`${lines.join("\n")}\n`);
  }
}

function cellText(value: string | number | null | undefined): string {
  return value === null || value === undefined ? "" : visible(String(value));
}

function truncate(value: string, width: number): string {
  return value.length <= width ? value : `${value.slice(0, Math.max(0, width - 1))}…`;
}

// Narrows the shrinkable columns (widest first) until the table fits `total` characters.
function fit<Row>(widths: number[], columns: Column<Row>[], total: number): void {
  const gaps = 2 * (widths.length - 1);
  let over = widths.reduce((sum, w) => sum + w, 0) + gaps - total;
  while (over > 0) {
    let widest = -1;
    for (let i = 0; i < widths.length; i++) {
      if (columns[i]!.shrink && widths[i]! > MIN_WIDTH && (widest < 0 || widths[i]! > widths[widest]!))
        widest = i;
    }
    if (widest < 0) return;
    const cut = Math.min(over, widths[widest]! - MIN_WIDTH);
    widths[widest]! -= cut;
    over -= cut;
  }
}
