import type { Client } from "@libsql/client";

/** True when `value` has what Postel uses of a libsql `Client` (`execute`, `batch`, `transaction`). */
export function isLibsqlClient(value: unknown): value is Client {
  const client = value as Partial<Record<keyof Client, unknown>> | null;
  return (
    typeof client === "object" &&
    client !== null &&
    typeof client.execute === "function" &&
    typeof client.batch === "function" &&
    typeof client.transaction === "function"
  );
}
