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

/**
 * Everything a command prints. Tables and key/value blocks for people; with `--json`, one JSON
 * document (or NDJSON lines, for `tail`). Colour only on a terminal, and never with NO_COLOR.
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
    this.#stdout.write(`${line ? JSON.stringify(value) : JSON.stringify(value, null, 2)}\n`);
  }

  /** Plain text on stdout. */
  text(text: string): void {
    this.#stdout.write(`${text}\n`);
  }

  /** A hint or progress for the person at the terminal: stderr, so pipes get only the data. */
  note(text: string): void {
    this.#stderr.write(`${text}\n`);
  }

  /** Whether stderr is a terminal (progress redraws in place there). */
  get stderrIsTTY(): boolean {
    return this.#stderr.isTTY === true;
  }

  /** Raw stderr, for progress lines redrawn with `\r`. */
  progress(text: string): void {
    this.#stderr.write(text);
  }

  /** An aligned table; on a terminal, shrunk (with `…`) to its width. */
  table<Row>(columns: Column<Row>[], rows: Row[]): void {
    if (rows.length === 0) return;
    const cells = rows.map((row) => columns.map((column) => text(column.cell(row))));
    const widths = columns.map((column, i) =>
      Math.max(column.header.length, ...cells.map((r) => r[i]!.length)),
    );
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
    this.text(
      [
        line(
          columns.map((c) => c.header),
          true,
        ),
        ...cells.map((r) => line(r, false)),
      ].join("\n"),
    );
  }

  /** `key  value` lines, keys aligned; null values are left out. */
  fields(entries: [string, string | number | null | undefined][]): void {
    const shown = entries.filter(([, value]) => value !== null && value !== undefined);
    const width = Math.max(...shown.map(([key]) => key.length));
    this.text(
      shown
        .map(
          ([key, value]) =>
            `${this.paint(key.padEnd(width), "dim")}  ${this.paint(String(value), TONE[String(value)])}`,
        )
        .join("\n"),
    );
  }

  /** A section heading between blocks. */
  heading(title: string): void {
    this.text(`\n${this.paint(title, "bold")}`);
  }

  /** `text` in a colour, when colour is on. */
  paint(text: string, style: keyof typeof ANSI | undefined): string {
    if (!this.#colour || style === undefined) return text;
    return `\x1b[${ANSI[style]}m${text}\x1b[0m`;
  }
}

function text(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return "";
  return String(value).replace(/\s+/g, " ");
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
