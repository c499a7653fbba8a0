import type { Sql } from "postgres";

/**
 * Every row of every table in the `postel` schema, keyed by table and in a fixed order, in one
 * round trip: what the input properties compare before and after each bad input.
 */
export async function dumpTables(sql: Sql): Promise<Record<string, unknown>> {
  const tables = await sql<{ name: string }[]>`
    SELECT table_name AS name FROM information_schema.tables
    WHERE table_schema = 'postel' AND table_type = 'BASE TABLE' ORDER BY table_name`;
  const selects = tables.map(
    ({ name }) =>
      `SELECT '${name}' AS name, (SELECT coalesce(json_agg(t ORDER BY t::text), '[]') FROM postel."${name}" t) AS rows`,
  );
  const rows = await sql.unsafe<{ name: string; rows: unknown }[]>(selects.join(" UNION ALL "));
  return Object.fromEntries(rows.map((row) => [row.name, row.rows]));
}
