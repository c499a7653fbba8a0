import type { Client } from "@libsql/client";

/** How many deliveries are in each status, straight from the table (counts every row: for tests). */
export async function countDeliveries(client: Client): Promise<Record<string, number>> {
  const { rows } = await client.execute(
    "SELECT status, count(*) AS n FROM postel_deliveries GROUP BY status",
  );
  return Object.fromEntries(rows.map((row) => [String(row["status"]), Number(row["n"])]));
}
