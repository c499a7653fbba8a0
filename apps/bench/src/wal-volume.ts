import type { Sql } from "postgres";

/**
 * The WAL written while one measured phase ran, from a `CHECKPOINT` at its start (issue 15's figure).
 * PostgreSQL keeps one WAL for the whole cluster: whatever other databases wrote meanwhile is in
 * `bytes` too, and `otherDatabasesBytes` says how much of it that was.
 */
export interface WalVolume {
  /** The LSN difference from just after the `CHECKPOINT` to the end of the phase. */
  bytes: number;
  /** Full-page images in that range (NaN when pg_walinspect could not read it). */
  fpiBytes: number;
  /** Records whose first block belongs to another database (NaN when pg_walinspect could not read it). */
  otherDatabasesBytes: number;
  /**
   * Another checkpoint began during the phase (anyone's `CHECKPOINT` or `DROP DATABASE`, or
   * `max_wal_size`): pages changed after it paid a second FPI, so only the figure without them stands.
   */
  checkpointed: boolean;
  /** `BENCH_WAL_BREAKDOWN` only: the WAL by relation and record type, largest first. */
  breakdown?: WalShare[];
}

/** The WAL of one relation and record type (`BENCH_WAL_BREAKDOWN`). */
export interface WalShare {
  relation: string;
  /** Resource manager and record type, e.g. `Heap/HOT_UPDATE`. */
  record: string;
  records: number;
  /** Record bytes without their full-page images (and without alignment or page headers). */
  bytes: number;
  fpiBytes: number;
}

/** Where a measured phase's WAL starts. */
export interface WalMark {
  lsn: string;
  /** The redo point of the checkpoint just issued: if it moves, another checkpoint ran. */
  redo: string;
  /** Whether pg_walinspect is installed in this database (PostgreSQL 15+ contrib). */
  inspect: boolean;
  /** Lets the server recycle the range's WAL again (see `holdWal`). */
  release(): Promise<void>;
}

/** The range a measured phase wrote. */
export interface WalRange extends WalMark {
  end: string;
  bytes: number;
  checkpointed: boolean;
}

/**
 * Issues a `CHECKPOINT` (so every phase starts alike: each page's first change after it is logged
 * in full) and returns the WAL position right after it. Call it right before the phase starts.
 */
export async function startWal(sql: Sql): Promise<WalMark> {
  const inspect = await sql`CREATE EXTENSION IF NOT EXISTS pg_walinspect`.then(
    () => true,
    () => false,
  );
  const release = inspect ? await holdWal(sql) : async () => {};
  await sql`CHECKPOINT`;
  const [row] = await sql<{ lsn: string; redo: string }[]>`
    SELECT pg_current_wal_insert_lsn()::text AS lsn, (SELECT redo_lsn::text FROM pg_control_checkpoint()) AS redo`;
  return { lsn: row!.lsn, redo: row!.redo, inspect, release };
}

/**
 * Keeps the WAL from here on until the returned function is called, so that a checkpoint someone
 * else starts during the phase cannot recycle it before it is read (PostgreSQL 15 checkpoints on
 * every DROP DATABASE, and test suites sharing the server drop many). It is a temporary physical
 * replication slot on a connection of its own: if the bench dies, the slot goes with the session.
 * Without a free slot nothing is held, and a checkpoint during the phase leaves only the total.
 */
async function holdWal(sql: Sql): Promise<() => Promise<void>> {
  const connection = await sql.reserve();
  try {
    const [slot] = await connection<{ name: string }[]>`
      SELECT slot_name AS name
      FROM pg_create_physical_replication_slot('postel_bench_wal_' || pg_backend_pid(), true, true)`;
    return async () => {
      await connection`SELECT pg_drop_replication_slot(${slot!.name})`;
      connection.release();
    };
  } catch {
    connection.release();
    return async () => {};
  }
}

/** Where the phase ended. Call it as soon as the phase is over. */
export async function endWal(sql: Sql, mark: WalMark): Promise<WalRange> {
  const [row] = await sql<{ end: string; bytes: string; redo: string }[]>`
    SELECT pg_current_wal_insert_lsn()::text AS end,
      pg_wal_lsn_diff(pg_current_wal_insert_lsn(), ${mark.lsn}::pg_lsn)::text AS bytes,
      (SELECT redo_lsn::text FROM pg_control_checkpoint()) AS redo`;
  return { ...mark, end: row!.end, bytes: Number(row!.bytes), checkpointed: row!.redo !== mark.redo };
}

/**
 * Reads the range with pg_walinspect: its full-page images and what other databases wrote in it
 * (about a second per 100 MB of WAL, after the phase, so outside its clock and its CPU figure).
 */
export async function inspectWal(sql: Sql, range: WalRange, breakdown = false): Promise<WalVolume> {
  const unread = { bytes: range.bytes, fpiBytes: Number.NaN, otherDatabasesBytes: Number.NaN };
  if (!range.inspect) return { ...unread, checkpointed: range.checkpointed };
  try {
    // pg_walinspect reads only flushed WAL; the last records may still be in the WAL buffers.
    for (let waited = 0; waited < 5_000; waited += 50) {
      const [row] = await sql<{ flushed: boolean }[]>`
        SELECT pg_current_wal_flush_lsn() >= ${range.end}::pg_lsn AS flushed`;
      if (row!.flushed) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const [fpi] = await sql<{ bytes: string }[]>`
      SELECT coalesce(sum(fpi_size), 0)::text AS bytes
      FROM pg_get_wal_stats(${range.lsn}::pg_lsn, ${range.end}::pg_lsn, false)`;
    // The database oid is the second number of a block reference: "blkref #0: rel 1663/16384/16390 ...".
    const [other] = await sql<{ bytes: string }[]>`
      SELECT coalesce(sum(record_length), 0)::text AS bytes
      FROM pg_get_wal_records_info(${range.lsn}::pg_lsn, ${range.end}::pg_lsn)
      WHERE split_part(split_part(block_ref, 'rel ', 2), '/', 2)
        NOT IN ('', (SELECT oid::text FROM pg_database WHERE datname = current_database()))`;
    return {
      bytes: range.bytes,
      fpiBytes: Number(fpi!.bytes),
      otherDatabasesBytes: Number(other!.bytes),
      checkpointed: range.checkpointed,
      ...(breakdown ? { breakdown: await walBreakdown(sql, range) } : {}),
    };
  } catch (error) {
    // E.g. no slot held the WAL and a checkpoint recycled it: the LSN difference stands.
    process.stderr.write(`  (pg_walinspect could not read the run's WAL: ${(error as Error).message})\n`);
    return { ...unread, checkpointed: range.checkpointed };
  } finally {
    await range.release();
  }
}

/** The range's WAL by relation (named in this database) and record type, largest first. */
async function walBreakdown(sql: Sql, range: WalRange): Promise<WalShare[]> {
  const rows = await sql<{ relation: string; record: string; records: string; bytes: string; fpi: string }[]>`
    WITH records AS (
      SELECT resource_manager || '/' || record_type AS record, record_length, fpi_length,
        regexp_match(block_ref, 'rel (\\d+)/(\\d+)/(\\d+)') AS rel
      FROM pg_get_wal_records_info(${range.lsn}::pg_lsn, ${range.end}::pg_lsn)
    )
    SELECT
      CASE
        WHEN rel IS NULL THEN '(no relation)'
        WHEN rel[2]::oid <> (SELECT oid FROM pg_database WHERE datname = current_database())
          THEN '(other databases)'
        ELSE coalesce(pg_filenode_relation(rel[1]::oid, rel[3]::oid)::regclass::text, 'filenode ' || rel[3])
      END AS relation,
      record, count(*)::text AS records, sum(record_length - fpi_length)::text AS bytes,
      sum(fpi_length)::text AS fpi
    FROM records GROUP BY 1, 2 ORDER BY sum(record_length) DESC`;
  return rows.map((row) => ({
    relation: row.relation,
    record: row.record,
    records: Number(row.records),
    bytes: Number(row.bytes),
    fpiBytes: Number(row.fpi),
  }));
}

/** `WAL 2,470 B per delivery (2,063 without full-page images)`, with a warning when a figure is suspect. */
export function describeWal(wal: WalVolume, deliveries: number): string {
  const bytes = (value: number) => Math.round(value / deliveries).toLocaleString("en-US");
  const other = wal.otherDatabasesBytes / wal.bytes;
  return (
    `WAL ${bytes(wal.bytes)} B per delivery (${Number.isNaN(wal.fpiBytes) ? "?" : bytes(wal.bytes - wal.fpiBytes)} ` +
    "without full-page images)" +
    (other >= 0.01 ? ` — ${(other * 100).toFixed(1)}% of it from other databases` : "") +
    (wal.checkpointed ? " — a checkpoint ran during the drain: more full-page images" : "")
  );
}

/**
 * The BENCH_WAL_BREAKDOWN table, per delivery: every relation and record type with at least 0.5% of
 * the WAL, then the rest, then what the records leave out (alignment padding and page headers).
 */
export function describeWalBreakdown(wal: WalVolume, deliveries: number): string[] {
  if (!wal.breakdown) return [];
  const shown = wal.breakdown.filter((share) => share.bytes + share.fpiBytes >= wal.bytes * 0.005);
  const rest = wal.breakdown.slice(shown.length);
  const sum = (shares: WalShare[], key: "records" | "bytes" | "fpiBytes") =>
    shares.reduce((total, share) => total + share[key], 0);
  const rows: [string, number, number, number][] = [
    ...shown.map((s): [string, number, number, number] => [
      `${s.relation} ${s.record}`,
      s.records,
      s.bytes,
      s.fpiBytes,
    ]),
    [`${rest.length} more`, sum(rest, "records"), sum(rest, "bytes"), sum(rest, "fpiBytes")],
    [
      "alignment padding and page headers",
      0,
      wal.bytes - wal.fpiBytes - sum(wal.breakdown, "bytes"),
      wal.fpiBytes - sum(wal.breakdown, "fpiBytes"),
    ],
  ];
  const width = Math.max(...rows.map(([what]) => what.length));
  const per = (value: number) => (value / deliveries).toFixed(value / deliveries < 10 ? 2 : 0).padStart(6);
  return [
    `    ${"WAL per delivery".padEnd(width)}  records   bytes     FPI`,
    ...rows.map(
      ([what, records, bytes, fpi]) =>
        `    ${what.padEnd(width)}  ${per(records)}  ${per(bytes)}  ${per(fpi)}`,
    ),
  ];
}
