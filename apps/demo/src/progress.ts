import type { OutboundStats, StatsOptions } from "@postel/core";

/** One endpoint's row in the live table. */
export type ProgressRow = {
  endpoint: string;
  state: string;
  delivered: number;
  retrying: number;
  held: number;
  deadLettered: number;
};

/**
 * Reads each endpoint's work and state from `stats()` (exact counts, a day of health buckets): a
 * delivery succeeds on exactly one attempt, so its endpoint's successful attempts are its deliveries.
 */
export async function progressRows(
  outbound: { stats(options: StatsOptions): Promise<OutboundStats> },
  endpoints: { name: string; id: string }[],
): Promise<ProgressRow[]> {
  const stats = await outbound.stats({ window: "1d", exact: true });
  return endpoints.map(({ name, id }) => {
    const row = stats.endpoints.find((endpoint) => endpoint.id === id);
    return {
      endpoint: name,
      state: row?.state ?? "deleted",
      delivered: row === undefined ? 0 : row.attempts - row.failures,
      retrying: row === undefined ? 0 : row.due + row.inFlight + row.scheduled,
      held: row?.held ?? 0,
      deadLettered: row?.deadLetters ?? 0,
    };
  });
}

/** Renders rows as an aligned text table. */
export function table(rows: Record<string, string | number>[]): string {
  if (rows.length === 0) return "";
  const columns = Object.keys(rows[0]!);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join("  ");
  return [
    line(columns),
    line(widths.map((w) => "─".repeat(w))),
    ...rows.map((r) => line(columns.map((c) => String(r[c])))),
  ].join("\n");
}

/**
 * A live view: redrawn in place on a terminal, a line every couple of seconds in CI logs.
 */
export class LiveView {
  #lines = 0;
  #lastPlain = 0;
  readonly #tty = process.stdout.isTTY === true;

  show(title: string, body: string): void {
    if (this.#tty) {
      if (this.#lines > 0) process.stdout.write(`\x1b[${this.#lines}A\x1b[J`);
      const text = `${title}\n${body}\n`;
      process.stdout.write(text);
      this.#lines = text.split("\n").length - 1;
    } else if (Date.now() - this.#lastPlain >= 2_000) {
      this.#lastPlain = Date.now();
      process.stdout.write(`${title}\n${body}\n\n`);
    }
  }

  /** Keep what is on screen and start fresh below it. */
  release(): void {
    this.#lines = 0;
    this.#lastPlain = 0;
  }
}
