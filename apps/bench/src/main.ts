import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg, totalmem } from "node:os";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { buildBaseline, compareWithBaseline, guardRows, runScenarioOnce } from "./baseline.js";
import { SERVER_URL } from "./database.js";
import { type Scenario, scaleFor } from "./scenario.js";
import { BENCH_TENANT } from "./table-state.js";
import { backlog } from "./scenarios/backlog.js";
import { tail } from "./scenarios/tail.js";
import { credentials, sqliteCredentials } from "./scenarios/credentials.js";
import { dashboard } from "./scenarios/dashboard.js";
import { drain, fanout } from "./scenarios/drain.js";
import { failover } from "./scenarios/failover.js";
import { history } from "./scenarios/history.js";
import { latency } from "./scenarios/latency.js";
import { memory } from "./scenarios/memory.js";
import { noisyNeighbour } from "./scenarios/noisy-neighbour.js";
import { peers } from "./scenarios/peers.js";
import { portal } from "./scenarios/portal.js";
import { quietEndpoint } from "./scenarios/quiet-endpoint.js";
import { receive } from "./scenarios/receive.js";
import { ordering } from "./scenarios/ordering.js";
import { retention, sqliteRetention } from "./scenarios/retention.js";
import { sendBatch, sqliteSendBatch } from "./scenarios/send-batch.js";
import { sendCatalog } from "./scenarios/send-catalog.js";
import { sendLatency } from "./scenarios/send-latency.js";
import { sqliteDashboard } from "./scenarios/sqlite-dashboard.js";
import { sqliteDrain } from "./scenarios/sqlite-drain.js";
import { sqliteSendLatency } from "./scenarios/sqlite-send-latency.js";
import { tableStates } from "./scenarios/table-states.js";
import { telemetry } from "./scenarios/telemetry.js";
import { wakeLatency } from "./scenarios/wake-latency.js";
import { sqliteVersion } from "./sqlite-file.js";
import {
  formatNumber,
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
  tableStates,
  fanout,
  sendLatency,
  sendBatch,
  sendCatalog,
  wakeLatency,
  history,
  retention,
  memory,
  noisyNeighbour,
  quietEndpoint,
  ordering,
  latency,
  peers,
  telemetry,
  credentials,
  dashboard,
  backlog,
  tail,
  portal,
  failover,
  receive,
  sqliteDrain,
  sqliteSendLatency,
  sqliteSendBatch,
  sqliteRetention,
  sqliteDashboard,
  sqliteCredentials,
];
const STORAGES = ["postgres", "sqlite"] as const;

const USAGE = `Usage: pnpm bench [--quick] [--storage <postgres|sqlite>] [--scenario <name>]... [--runs <n>]

  --quick            scale everything down (a smoke run of a minute or two)
  --storage <kind>   run only the scenarios of this storage: postgres (${names("postgres")})
                     or sqlite (${names("sqlite")}, no server needed); ${names("none")} need no database
  --scenario <name>  run only this scenario (repeatable)
  --runs <n>         runs per measurement (default 3, quick 1); the table shows medians
  --baseline <ref>   also measure that commit's library (built once in a scratch worktree) with this
                     harness, in the same run, alternating with this build; its figures go in the
                     baseline column
  --messages <n>     messages per drain of table-states and peers (default 20,000, quick 4,000)
  --tenant           table-states sends every message, and makes its endpoint, with a tenant: what
                     an app with tenants pays for their index
  --current <ref>    with --baseline: measure that commit's library in this build's place
  --guard <ratio>    with --baseline: exit 1 when PostgreSQL CPU or WAL per delivery is more than
                     <ratio> times the baseline's on any row (the CI guard, issue 25)
  --busy-core        keep one core busy with another process for the whole run (a production app
                     does other work)
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
    "busy-core": { type: "boolean", default: false },
    current: { type: "string" },
    messages: { type: "string" },
    tenant: { type: "boolean", default: false },
    guard: { type: "string" },
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
if (values.messages !== undefined) {
  const messages = Number(values.messages);
  if (!Number.isSafeInteger(messages) || messages < 1) {
    process.stderr.write(`--messages takes a whole number of messages, not ${values.messages}\n\n${USAGE}`);
    process.exit(2);
  }
  scale.stateMessages = messages;
}
// Read by table-state.ts, in this process and in each run's child (a baseline's too).
if (values.tenant) process.env["POSTEL_BENCH_TENANT"] = BENCH_TENANT;
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
// A baseline's run (--baseline): say which library it loaded, so a wrong one shows.
if (process.env["POSTEL_BENCH_LIBRARY"]) log(`  library: ${import.meta.resolve("@postel/core")}`);

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

// --busy-core: another process spinning on one core until the bench exits.
const busy = values["busy-core"]
  ? spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" })
  : undefined;
if (busy) {
  busy.unref();
  process.on("exit", () => busy.kill("SIGKILL"));
  log("  --busy-core: one core kept busy by another process for the whole run");
}

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
  const contender = values.current === undefined ? undefined : await buildBaseline(values.current, log);
  const self = fileURLToPath(import.meta.url);
  const runs = { current: [] as Metric[][], baseline: [] as Metric[][] };
  for (let run = 1; run <= scale.runs; run++) {
    for (const scenario of selected) {
      // Alternating, the order flipped every run: neither build always gets the fresher machine.
      const order = run % 2 === 1 ? (["current", "baseline"] as const) : (["baseline", "current"] as const);
      for (const which of order) {
        const current = contender ? `${contender.ref} (${contender.sha.slice(0, 12)})` : "this build";
        log(
          `\n▶ ${scenario.name}, run ${run}/${scale.runs}: ${which === "current" ? current : `${ref} (${build.sha.slice(0, 12)})`}`,
        );
        const library = which === "current" ? contender?.dir : build.dir;
        const extra = values.messages === undefined ? [] : ["--messages", values.messages];
        runs[which].push(await runScenarioOnce(self, scenario.name, scale.quick, library, extra));
      }
    }
  }
  metrics.push(...compareWithBaseline(runs.current, runs.baseline, `${ref} (${build.sha.slice(0, 12)})`));
}

// The peer comparison gets a table of its own, laid out as issue 15's: a row per party.
const peerMetrics = metrics.filter(hasPeers);
const otherMetrics = metrics.filter((m) => !hasPeers(m));
if (otherMetrics.length > 0) process.stdout.write(`\n${formatTable(otherMetrics)}\n`);
// One table per group (peers prints one per table state).
for (const group of new Set(peerMetrics.map((m) => m.scenario))) {
  const table = formatPeerTable(peerMetrics.filter((m) => m.scenario === group));
  process.stdout.write(`\n${group}\n${table}\n`);
}
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
  busyCore: values["busy-core"],
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

if (values.guard !== undefined) {
  const limit = Number(values.guard);
  const rows = values.baseline === undefined ? [] : guardRows(metrics, limit);
  process.stdout.write(`\nGuard: PostgreSQL CPU and WAL per delivery at most ${limit}× the baseline's\n`);
  for (const row of rows) {
    process.stdout.write(
      `  ${row.passed ? "✓" : "✗"} ${row.metric}: ${formatNumber(row.current)} against ${formatNumber(row.baseline)} (${row.ratio.toFixed(2)}×)\n`,
    );
  }
  if (rows.length === 0) {
    process.stdout.write(
      "  ✗ nothing to compare: --guard needs --baseline and a PostgreSQL drain scenario\n",
    );
    process.exitCode = 1;
  } else if (rows.some((row) => !row.passed)) {
    process.stdout.write(
      `Guard failed: ${rows.filter((row) => !row.passed).length} of ${rows.length} rows\n`,
    );
    process.exitCode = 1;
  } else {
    process.stdout.write(`Guard passed: ${rows.length} rows\n`);
  }
}

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
