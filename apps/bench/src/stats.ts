/** The value below which `p` percent of the samples fall (nearest rank). */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** The median of the samples (the mean of the two middle ones for an even count). */
export function median(samples: readonly number[]): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** A target a metric is checked against. */
export interface Target {
  op: ">=" | "<=";
  value: number;
}

/** One row of the results table: Postel's median, the naive baseline's when measured, the target. */
export interface Metric {
  scenario: string;
  name: string;
  unit: string;
  /** Median over the runs (infinite when the median run did not finish: see `display`). */
  postel: number;
  /** What the Postel column shows instead of the number, e.g. `10,368 of 18,000 after 120 s`. */
  display?: string;
  /** Every run's value. */
  postelRuns: number[];
  /** The baseline's median: the naive loop's, or the scenario's reference case (see its note). */
  naive?: number;
  naiveRuns?: number[];
  /** The minimal loop's median (drain only): the ceiling of a worker that does nothing but claim, sign, POST and complete. */
  minimal?: number;
  minimalRuns?: number[];
  /** The peer queues' medians (scenario `peers`): graphile-worker and pg-boss with a hand-written webhook task. */
  graphileWorker?: number;
  graphileWorkerRuns?: number[];
  pgBoss?: number;
  pgBossRuns?: number[];
  /**
   * Where the row's figures are a part of a larger one, that one (the same parties, medians of their
   * own runs), shown first with the part in parentheses: WAL per delivery, then without full-page
   * images. Targets and ratios are on the part.
   */
  total?: Pick<Metric, PartyFigure>;
  target?: Target;
  /** A target on postel / baseline (e.g. ≤ 1.25× the all-healthy case). */
  ratioTarget?: Target;
  note?: string;
}

/** The fields that carry a party's median and its runs. */
export type PartyFigure =
  | "postel"
  | "postelRuns"
  | "naive"
  | "naiveRuns"
  | "minimal"
  | "minimalRuns"
  | "graphileWorker"
  | "graphileWorkerRuns"
  | "pgBoss"
  | "pgBossRuns";

/** Whether `value` meets `target` (true when there is no target). */
export function meets(value: number, target: Target | undefined): boolean {
  if (!target) return true;
  return target.op === ">=" ? value >= target.value : value <= target.value;
}

/** postel / naive, or undefined without a baseline. */
export function ratio(metric: Metric): number | undefined {
  return metric.naive === undefined || metric.naive === 0 ? undefined : metric.postel / metric.naive;
}

/** postel / minimal loop: how close Postel comes to the ceiling of the same run (undefined without one). */
export function shareOfMinimal(metric: Metric): number | undefined {
  return metric.minimal === undefined || metric.minimal === 0 ? undefined : metric.postel / metric.minimal;
}

/** A number for humans: thousands separators, at most 2 decimals below 100. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return "—";
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

function verdict(metric: Metric): string {
  const r = ratio(metric);
  const ok = meets(metric.postel, metric.target) && (r === undefined || meets(r, metric.ratioTarget));
  return metric.target || metric.ratioTarget ? (ok ? "✓" : "✗") : "";
}

/** The results as an aligned text table. */
export function formatTable(metrics: readonly Metric[]): string {
  const header = [
    "scenario",
    "metric",
    "Postel",
    "baseline",
    "× baseline",
    "minimal loop (× naive)",
    "÷ minimal",
    "target",
    "",
  ];
  const rows = metrics.map((m) => {
    const shown = (part: number, total: number | undefined) =>
      total === undefined ? formatNumber(part) : `${formatNumber(total)} (${formatNumber(part)})`;
    const r = ratio(m);
    const share = shareOfMinimal(m);
    const ceiling = m.minimal !== undefined && m.naive ? ` (${formatNumber(m.minimal / m.naive)}×)` : "";
    const targets = [
      m.target ? `${m.target.op} ${formatNumber(m.target.value)}` : "",
      m.ratioTarget ? `${m.ratioTarget.op} ${formatNumber(m.ratioTarget.value)}×` : "",
    ].filter(Boolean);
    return [
      m.scenario,
      `${m.name} (${m.unit})`,
      m.display ?? shown(m.postel, m.total?.postel),
      m.naive === undefined ? "" : shown(m.naive, m.total?.naive),
      r === undefined ? "" : Number.isFinite(r) ? `${formatNumber(r)}×` : "—",
      m.minimal === undefined ? "" : `${shown(m.minimal, m.total?.minimal)}${ceiling}`,
      share === undefined ? "" : formatNumber(share),
      targets.join(", "),
      verdict(m),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i >= 2 && i <= 6 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

/** The parties of the `peers` scenario, as rows of its table. */
const PEER_PARTIES = [
  { label: "Postel", key: "postel" },
  { label: "graphile-worker", key: "graphileWorker" },
  { label: "pg-boss", key: "pgBoss" },
] as const;

/** Whether a metric puts Postel beside the peer queues (shown by `formatPeerTable`, not `formatTable`). */
export function hasPeers(metric: Metric): boolean {
  return metric.graphileWorker !== undefined || metric.pgBoss !== undefined;
}

/**
 * The peer comparison as issue 15 lays it out: one row per party, one column per metric (medians;
 * a figure with a total shows the total first, the part in parentheses).
 */
export function formatPeerTable(metrics: readonly Metric[]): string {
  const header = ["party", ...metrics.map((m) => `${m.name} (${m.unit})`)];
  const rows = PEER_PARTIES.map(({ label, key }) => [
    label,
    ...metrics.map((m) => {
      const part = m[key];
      const total = m.total?.[key];
      if (part === undefined) return "";
      return total === undefined ? formatNumber(part) : `${formatNumber(total)} (${formatNumber(part)})`;
    }),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}
