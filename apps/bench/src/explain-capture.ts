import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import postgres, { type Notice, type Sql } from "postgres";

// BENCH_EXPLAIN=<dir> (diagnostics, issue 25): the Postel worker's pool runs with auto_explain on its
// own connections (`session_preload_libraries`, so the bench's user must be a superuser), logging the
// plan of every statement it runs, as run (ANALYZE, BUFFERS), at NOTICE level to that connection. On
// exit, the plan of median duration of each of the worker's hot statements goes to
// <dir>/<label>-<statement>.txt, with how many ran and their total time.

/** Which of the worker's statements a logged query is, by text. */
function statementOf(query: string): string | undefined {
  if (query.includes("changed AS") && query.includes("json_to_recordset")) return "outcomes";
  if (query.includes("FOR UPDATE SKIP LOCKED") && query.includes("lease_until =")) return "fanout-claim";
  if (query.includes("FOR UPDATE SKIP LOCKED") && query.includes("postel.deliveries")) return "due-claim";
  return undefined;
}

/** A pool for the worker that captures its plans; `write` stores them. */
export function explainingPool(url: string, dir: string, label: string): { sql: Sql; write(): void } {
  const plans = new Map<string, { ms: number; text: string }[]>();
  const onnotice = (notice: Notice) => {
    const message = String(notice["message"] ?? "");
    const match = /^duration: ([\d.]+) ms\s+plan:\n/.exec(message);
    if (!match) return;
    const body = message.slice(match[0].length);
    const statement = statementOf(body);
    if (statement === undefined) return;
    const list = plans.get(statement) ?? [];
    list.push({ ms: Number(match[1]), text: body });
    plans.set(statement, list);
  };
  const sql = postgres(url, {
    max: 10,
    onnotice,
    connection: {
      session_preload_libraries: "auto_explain",
      "auto_explain.log_min_duration": "0",
      "auto_explain.log_analyze": "on",
      "auto_explain.log_buffers": "on",
      "auto_explain.log_level": "notice",
    },
  });
  return {
    sql,
    write() {
      mkdirSync(dir, { recursive: true });
      for (const [statement, list] of plans) {
        const sorted = [...list].sort((a, b) => a.ms - b.ms);
        const median = sorted[Math.floor(sorted.length / 2)]!;
        const total = list.reduce((sum, plan) => sum + plan.ms, 0);
        writeFileSync(
          join(dir, `${label}-${statement}.txt`),
          `${label}, ${statement}: ${list.length} ran, ${total.toFixed(1)} ms in all; the median (${median.ms} ms):\n\n${median.text}\n`,
        );
      }
    },
  };
}
