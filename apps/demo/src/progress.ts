import type { DeliveryStatus, Endpoint, Storage } from "@postel/core";

/** One endpoint's row in the live table. */
export type ProgressRow = {
  endpoint: string;
  state: string;
  delivered: number;
  retrying: number;
  held: number;
  deadLettered: number;
};

/** Reads each endpoint's delivery counts and state from storage. */
export async function progressRows(
  storage: Storage<unknown>,
  endpoints: { name: string; id: string }[],
  get: (id: string) => Promise<Endpoint | null>,
): Promise<ProgressRow[]> {
  return Promise.all(
    endpoints.map(async ({ name, id }) => {
      const counts: Partial<Record<DeliveryStatus, number>> = await storage.countDeliveries(id);
      return {
        endpoint: name,
        state: (await get(id))?.state ?? "deleted",
        delivered: counts.succeeded ?? 0,
        retrying: counts.pending ?? 0,
        held: counts.held ?? 0,
        deadLettered: counts["dead-lettered"] ?? 0,
      };
    }),
  );
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
