import { mkdir, writeFile } from "node:fs/promises";
import { cpus, totalmem } from "node:os";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { SERVER_URL } from "./database.js";
import { type Scenario, scaleFor } from "./scenario.js";
import { drain, fanout } from "./scenarios/drain.js";
import { history } from "./scenarios/history.js";
import { memory } from "./scenarios/memory.js";
import { sendLatency } from "./scenarios/send-latency.js";
import { wakeLatency } from "./scenarios/wake-latency.js";
import { formatTable, type Metric, meets, ratio } from "./stats.js";

const SCENARIOS: Scenario[] = [drain, fanout, sendLatency, wakeLatency, history, memory];

const USAGE = `Usage: pnpm bench [--quick] [--scenario <name>]... [--runs <n>]

  --quick            scale everything down (a smoke run of a minute or two)
  --scenario <name>  run only this scenario (repeatable): ${SCENARIOS.map((s) => s.name).join(", ")}
  --runs <n>         runs per measurement (default 3, quick 1); the table shows medians
`;

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    scenario: { type: "string", multiple: true },
    runs: { type: "string" },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const unknown = (values.scenario ?? []).filter((name) => !SCENARIOS.some((s) => s.name === name));
if (unknown.length > 0) {
  process.stderr.write(`Unknown scenario(s): ${unknown.join(", ")}\n\n${USAGE}`);
  process.exit(2);
}
const scale = scaleFor(values.quick, values.runs === undefined ? undefined : Number(values.runs));
const selected = values.scenario ? SCENARIOS.filter((s) => values.scenario?.includes(s.name)) : SCENARIOS;
const log = (line: string) => process.stderr.write(`${line}\n`);

const server = postgres(SERVER_URL, { max: 1 });
const [row] = await server<{ server_version: string }[]>`SHOW server_version`;
await server.end();
const version = row?.server_version ?? "unknown";
const environment = {
  node: process.version,
  postgres: version,
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? "unknown",
  memoryGb: Math.round(totalmem() / 2 ** 30),
};
log(
  `Postel bench — ${scale.quick ? "quick" : "full"} run, ${scale.runs} run(s) per measurement; ` +
    `Node ${environment.node}, PostgreSQL ${environment.postgres}, ${environment.cpus} CPUs`,
);

const metrics: Metric[] = [];
const started = Date.now();
for (const scenario of selected) {
  log(`\n▶ ${scenario.name}: ${scenario.description}`);
  const t0 = Date.now();
  metrics.push(...(await scenario.run({ scale, log })));
  log(`  (${Math.round((Date.now() - t0) / 1000)} s)`);
}

process.stdout.write(`\n${formatTable(metrics)}\n`);
const failed = metrics.filter((m) => {
  const r = ratio(m);
  return !meets(m.postel, m.target) || (r !== undefined && !meets(r, m.ratioTarget));
});
const notes = metrics.filter((m) => m.note).map((m) => `  ${m.scenario}: ${m.note}`);
if (notes.length > 0) process.stdout.write(`\nNotes:\n${notes.join("\n")}\n`);

const result = {
  startedAt: new Date(started).toISOString(),
  durationS: Math.round((Date.now() - started) / 1000),
  command: `pnpm bench ${process.argv.slice(2).join(" ")}`.trim(),
  scale,
  environment,
  metrics: metrics.map((m) => ({ ...m, ratio: ratio(m) })),
  targetsMissed: failed.map((m) => `${m.scenario}: ${m.name}`),
};
const dir = new URL("../results/", import.meta.url);
await mkdir(dir, { recursive: true });
const file = new URL(`${result.startedAt.replaceAll(":", "-")}.json`, dir);
await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
if (!scale.quick && selected.length === SCENARIOS.length) {
  await writeFile(new URL("latest.json", dir), `${JSON.stringify(result, null, 2)}\n`);
}
process.stdout.write(`\nWrote ${file.pathname}\n`);
if (failed.length > 0) process.stdout.write(`Targets missed: ${result.targetsMissed.join("; ")}\n`);
