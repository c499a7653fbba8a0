import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { buildBaseline, compareWithBaseline, runScenarioOnce } from "./baseline.js";
import { SERVER_URL } from "./database.js";
import { type Scenario, scaleFor } from "./scenario.js";
import { dashboard } from "./scenarios/dashboard.js";
import { drain, fanout } from "./scenarios/drain.js";
import { failover } from "./scenarios/failover.js";
import { history } from "./scenarios/history.js";
import { latency } from "./scenarios/latency.js";
import { memory } from "./scenarios/memory.js";
import { noisyNeighbour } from "./scenarios/noisy-neighbour.js";
import { peers } from "./scenarios/peers.js";
import { quietEndpoint } from "./scenarios/quiet-endpoint.js";
import { retention, sqliteRetention } from "./scenarios/retention.js";
import { sendBatch, sqliteSendBatch } from "./scenarios/send-batch.js";
import { sendLatency } from "./scenarios/send-latency.js";
import { sqliteDashboard } from "./scenarios/sqlite-dashboard.js";
import { sqliteDrain } from "./scenarios/sqlite-drain.js";
import { sqliteSendLatency } from "./scenarios/sqlite-send-latency.js";
import { telemetry } from "./scenarios/telemetry.js";
import { wakeLatency } from "./scenarios/wake-latency.js";
import { sqliteVersion } from "./sqlite-file.js";
import {
  formatPeerTable,
  formatTable,
  hasPeers,
  type Metric,
  meets,
  ratio,
  shareOfMinimal,
} from "./stats.js";

const SCENARIOS: Scenario[] = [
  drain,
  fanout,
  sendLatency,
  sendBatch,
  wakeLatency,
  history,
  retention,
  memory,
  noisyNeighbour,
  quietEndpoint,
  latency,
  peers,
  telemetry,
  dashboard,
  failover,
  sqliteDrain,
  sqliteSendLatency,
  sqliteSendBatch,
  sqliteRetention,
  sqliteDashboard,
];
const STORAGES = ["postgres", "sqlite"] as const;

const USAGE = `Usage: pnpm bench [--quick] [--storage <postgres|sqlite>] [--scenario <name>]... [--runs <n>]

  --quick            scale everything down (a smoke run of a minute or two)
  --storage <kind>   run only the scenarios of this storage: postgres (${names("postgres")})
                     or sqlite (${names("sqlite")}, no server needed)
  --scenario <name>  run only this scenario (repeatable)
  --runs <n>         runs per measurement (default 3, quick 1); the table shows medians
  --baseline <ref>   also measure a build of that commit (built once in a scratch worktree), in the
                     same run, alternating with this build; its figures go in the baseline column
`;

function names(storage: Scenario["storage"]): string {
  return SCENARIOS.filter((s) => s.storage === storage)
    .map((s) => s.name)
    .join(", ");
}

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    scenario: { type: "string", multiple: true },
    storage: { type: "string" },
    runs: { type: "string" },
    baseline: { type: "string" },
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
const storage = values.storage;
if (storage !== undefined && !STORAGES.some((kind) => kind === storage)) {
  process.stderr.write(`Unknown storage: ${storage}\n\n${USAGE}`);
  process.exit(2);
}
const scale = scaleFor(values.quick, values.runs === undefined ? undefined : Number(values.runs));
const selected = SCENARIOS.filter(
  (s) => (!values.scenario || values.scenario.includes(s.name)) && (!storage || s.storage === storage),
);
if (selected.length === 0) {
  process.stderr.write(
    `No scenario matches --storage ${storage} and --scenario ${values.scenario?.join(", ")}\n`,
  );
  process.exit(2);
}
const log = (line: string) => process.stderr.write(`${line}\n`);

const environment = {
  node: process.version,
  // Asked of the server only when a selected scenario needs it: `--storage sqlite` runs without one.
  postgres: selected.some((s) => s.storage === "postgres") ? await postgresVersion() : "not used",
  sqlite: await sqliteVersion(),
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? "unknown",
  memoryGb: Math.round(totalmem() / 2 ** 30),
};
log(
  `Postel bench — ${scale.quick ? "quick" : "full"} run, ${scale.runs} run(s) per measurement; ` +
    `Node ${environment.node}, PostgreSQL ${environment.postgres}, SQLite ${environment.sqlite}, ` +
    `${environment.cpus} CPUs, load average ${loadAverage()}`,
);

const loadAtStart = loadavg();
const metrics: Metric[] = [];
const started = Date.now();
if (values.baseline === undefined) {
  for (const scenario of selected) {
    log(`\n▶ ${scenario.name}: ${scenario.description}`);
    const t0 = Date.now();
    metrics.push(...(await scenario.run({ scale, log })));
    log(`  (${Math.round((Date.now() - t0) / 1000)} s)`);
  }
} else {
  const ref = values.baseline;
  const build = await buildBaseline(ref, log);
  const self = fileURLToPath(import.meta.url);
  const runs = { current: [] as Metric[][], baseline: [] as Metric[][] };
  for (let run = 1; run <= scale.runs; run++) {
    for (const scenario of selected) {
      // Alternating, the order flipped every run: neither build always gets the fresher machine.
      const order = run % 2 === 1 ? (["current", "baseline"] as const) : (["baseline", "current"] as const);
      for (const which of order) {
        log(
          `\n▶ ${scenario.name}, run ${run}/${scale.runs}: ${which === "current" ? "this build" : `${ref} (${build.sha.slice(0, 12)})`}`,
        );
        const main = which === "current" ? self : build.main;
        runs[which].push(await runScenarioOnce(main, scenario.name, scale.quick));
      }
    }
  }
  metrics.push(...compareWithBaseline(runs.current, runs.baseline, `${ref} (${build.sha.slice(0, 12)})`));
}

// The peer comparison gets a table of its own, laid out as issue 15's: a row per party.
const peerMetrics = metrics.filter(hasPeers);
const otherMetrics = metrics.filter((m) => !hasPeers(m));
if (otherMetrics.length > 0) process.stdout.write(`\n${formatTable(otherMetrics)}\n`);
if (peerMetrics.length > 0) process.stdout.write(`\n${formatPeerTable(peerMetrics)}\n`);
process.stdout.write(
  `\nLoad average (1/5/15 min): ${loadAverage(loadAtStart)} at start, ${loadAverage()} at end\n`,
);
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
  // 1/5/15-minute load averages when the run started and when it ended: other work on the machine
  // takes its share of the 2 cores.
  loadAverage: { start: loadFigures(loadAtStart), end: loadFigures(loadavg()) },
  environment,
  metrics: metrics.map((m) => ({ ...m, ratio: ratio(m), shareOfMinimal: shareOfMinimal(m) })),
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

async function postgresVersion(): Promise<string> {
  const server = postgres(SERVER_URL, { max: 1 });
  try {
    const [row] = await server<{ server_version: string }[]>`SHOW server_version`;
    return row?.server_version ?? "unknown";
  } finally {
    await server.end();
  }
}

function loadAverage(load = loadavg()): string {
  return load.map((value) => value.toFixed(2)).join(" / ");
}

function loadFigures([oneMinute, fiveMinutes, fifteenMinutes]: number[]) {
  return { oneMinute, fiveMinutes, fifteenMinutes };
}
