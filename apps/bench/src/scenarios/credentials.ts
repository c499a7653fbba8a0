import { randomBytes } from "node:crypto";
import { type DrainMeasurement, drainWithPostel, startReceiver } from "../drain-run.js";
import type { BenchCredentials } from "../protocol.js";
import type { Scenario } from "../scenario.js";
import { drainSqliteWithPostel } from "../sqlite-drain-run.js";
import { type Metric, median } from "../stats.js";

type Mode = "off" | "on";

/** The metric of one storage: encryption on, with off as the baseline column (runs alternate). */
function metric(scenario: string, deliveries: number, runs: Map<Mode, DrainMeasurement[]>): Metric {
  const rates = (mode: Mode) => runs.get(mode)!.map((m) => m.perSecond);
  const cpu = (mode: Mode) => Math.round(median(runs.get(mode)!.map((m) => m.cpuPer1k.worker)));
  return {
    scenario,
    name: `${deliveries.toLocaleString("en-US")} deliveries, 1 endpoint, credentials encrypted`,
    unit: "deliveries/s",
    postel: median(rates("on")),
    postelRuns: rates("on"),
    naive: median(rates("off")),
    naiveRuns: rates("off"),
    ratioTarget: { op: ">=", value: 0.95 },
    note:
      "baseline: the same drain with credentials in plain text (runs alternate, the order flipped every run); " +
      "the endpoint has a signing secret and an Authorization header, encrypted with AES-256-GCM when on; " +
      `worker CPU ms per 1,000 deliveries, median: on ${cpu("on")}, off ${cpu("off")}`,
  };
}

/** Alternates `drain(mode)` off and on, `runs` times each, the order flipped every run. */
async function alternate(
  runs: number,
  drain: (credentials: BenchCredentials, label: string) => Promise<DrainMeasurement>,
): Promise<Map<Mode, DrainMeasurement[]>> {
  const measured = new Map<Mode, DrainMeasurement[]>([
    ["off", []],
    ["on", []],
  ]);
  for (let run = 1; run <= runs; run++) {
    const order: Mode[] = run % 2 === 1 ? ["off", "on"] : ["on", "off"];
    for (const mode of order) {
      const credentials: BenchCredentials =
        mode === "off" ? "off" : { key: randomBytes(32).toString("base64") };
      measured.get(mode)!.push(await drain(credentials, `encryption ${mode}, run ${run}/${runs}`));
    }
  }
  return measured;
}

/** Issue 28: the drain with endpoint credentials encrypted at rest beside the same drain in plain text. */
export const credentials: Scenario = {
  name: "credentials",
  storage: "postgres",
  description: "drain with endpoint credentials encrypted at rest vs plain text (target on ≥ 0.95× off)",
  async run({ scale, log }) {
    const { receiver, base } = await startReceiver();
    try {
      const runs = await alternate(scale.runs, (credentials, label) =>
        drainWithPostel(base, {
          messages: scale.drainMessages,
          endpoints: 1,
          log,
          receiver,
          label: `credentials ${label}`,
          worker: { credentials },
        }),
      );
      return [metric("credentials", scale.drainMessages, runs)];
    } finally {
      await receiver.kill();
    }
  },
};

/** The same on a SQLite file (`synchronous=full`, Postel's default). */
export const sqliteCredentials: Scenario = {
  name: "sqlite-credentials",
  storage: "sqlite",
  description:
    "drain on a SQLite file with endpoint credentials encrypted at rest vs plain text (target ≥ 0.95×)",
  async run({ scale, log }) {
    const { receiver, base } = await startReceiver();
    try {
      const runs = await alternate(scale.runs, (credentials, label) =>
        drainSqliteWithPostel(base, {
          messages: scale.sqliteDrainMessages,
          synchronous: "full",
          log,
          receiver,
          label: `sqlite-credentials ${label}`,
          credentials,
        }),
      );
      return [metric("sqlite-credentials", scale.sqliteDrainMessages, runs)];
    } finally {
      await receiver.kill();
    }
  },
};
