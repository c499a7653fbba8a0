import type { DrainMeasurement } from "./drain-run.js";
import { type Metric, median, type PartyFigure, type Target } from "./stats.js";

/**
 * The PostgreSQL drains behind one figure: Postel's and, where measured, the baseline's, the minimal
 * loop's and the peer queues'.
 */
export interface Drains {
  postel: DrainMeasurement[];
  naive?: DrainMeasurement[];
  minimal?: DrainMeasurement[];
  graphileWorker?: DrainMeasurement[];
  pgBoss?: DrainMeasurement[];
}

type Figures = Pick<Metric, PartyFigure>;

/** Each measured party's runs of `figure`, and their median. */
export function figures(drains: Drains, figure: (m: DrainMeasurement) => number): Figures {
  const postelRuns = drains.postel.map(figure);
  const naiveRuns = drains.naive?.map(figure) ?? [];
  const minimalRuns = drains.minimal?.map(figure) ?? [];
  const graphileWorkerRuns = drains.graphileWorker?.map(figure) ?? [];
  const pgBossRuns = drains.pgBoss?.map(figure) ?? [];
  return {
    postel: median(postelRuns),
    postelRuns,
    ...(naiveRuns.length > 0 ? { naive: median(naiveRuns), naiveRuns } : {}),
    ...(minimalRuns.length > 0 ? { minimal: median(minimalRuns), minimalRuns } : {}),
    ...(graphileWorkerRuns.length > 0
      ? { graphileWorker: median(graphileWorkerRuns), graphileWorkerRuns }
      : {}),
    ...(pgBossRuns.length > 0 ? { pgBoss: median(pgBossRuns), pgBossRuns } : {}),
  };
}

/**
 * Issue 15's two database figures as rows: WAL bytes per delivery from a CHECKPOINT at the start
 * of the drain (all of it, and without full-page images, which the target is on), and the
 * PostgreSQL backends' CPU per 1,000 deliveries.
 */
export function databaseCostRows(
  scenario: string,
  prefix: string,
  drains: Drains,
  targets?: { wal: Target; cpu: Target },
): Metric[] {
  const all = Object.values(drains).flatMap((runs: DrainMeasurement[] | undefined) => runs ?? []);
  const other = Math.max(...all.map((m) => (m.wal ? m.wal.otherDatabasesBytes / m.wal.bytes : 0)));
  const checkpointed = all.filter((m) => m.wal?.checkpointed).length;
  const warnings = [
    other >= 0.01 ? `up to ${(other * 100).toFixed(1)}% of a run's WAL came from other databases` : "",
    checkpointed > 0
      ? `a checkpoint ran during ${checkpointed} of ${all.length} drains (more FPIs in ${checkpointed > 1 ? "their totals" : "its total"})`
      : "",
  ].filter(Boolean);
  const perDelivery = (bytes: (m: DrainMeasurement) => number) => (m: DrainMeasurement) =>
    m.wal ? bytes(m) / m.deliveries : Number.NaN;
  return [
    {
      scenario,
      name: `${prefix}WAL per delivery, total (no FPI)`,
      unit: "bytes",
      ...figures(
        drains,
        perDelivery((m) => m.wal!.bytes - m.wal!.fpiBytes),
      ),
      total: figures(
        drains,
        perDelivery((m) => m.wal!.bytes),
      ),
      ...(targets ? { target: targets.wal } : {}),
      ...(warnings.length > 0 ? { note: `WAL: ${warnings.join("; ")}` } : {}),
    },
    {
      scenario,
      name: `${prefix}PostgreSQL CPU per 1,000 deliveries`,
      unit: "ms",
      ...figures(drains, (m) => m.cpuPer1k.database),
      ...(targets ? { target: targets.cpu } : {}),
    },
  ];
}
