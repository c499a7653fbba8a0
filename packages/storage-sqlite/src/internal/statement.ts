import type { InArgs } from "@libsql/client";

/** One statement with named (`:name`) arguments. */
export interface Statement {
  sql: string;
  args?: InArgs;
}
