import type { Client } from "@libsql/client";

/**
 * Every row of every table in the file (Postel's and the migrations'), keyed by table and in a
 * fixed order: what the input properties compare before and after each bad input.
 */
export async function dumpTables(client: Client): Promise<Record<string, unknown>> {
  const tables = await client.execute(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
  );
  const dump: Record<string, unknown> = {};
  for (const { name } of tables.rows) {
    const result = await client.execute(`SELECT * FROM "${String(name)}"`);
    dump[String(name)] = result.rows
      .map((row) => JSON.stringify(result.columns.map((_, i) => printable(row[i]))))
      .sort();
  }
  return dump;
}

function printable(value: unknown): unknown {
  if (value instanceof ArrayBuffer) return Buffer.from(value).toString("hex");
  return typeof value === "bigint" ? `${value}n` : value;
}
