// A namespace import, and the catalog made when the scenario runs: under `--baseline` every scenario
// module is loaded against an older @postel/core, which may have no defineEvents() at all.
import * as core from "@postel/core";
import { Postel, type Storage } from "@postel/core";
import { PostgresStorage } from "@postel/storage-postgres";
import { SqliteStorage } from "@postel/storage-sqlite";
import postgres from "postgres";
import { createBenchDatabase } from "../database.js";
import type { Scenario, ScenarioContext } from "../scenario.js";
import { createBenchFile } from "../sqlite-file.js";
import { type Metric, median, percentile } from "../stats.js";
import * as v from "valibot";
import type { InferInput } from "valibot";

const TYPE = "order.created";
/** Rounds of sends (one per side) before anything is timed: JIT, prepared statements, the file's pages. */
const WARM_UP_ROUNDS = 500;
/** Calls of each function before the validation microbenchmark times any. */
const WARM_UP_CALLS = 50_000;
/** Sends in flight in the concurrent variant. */
const IN_FLIGHT = 32;
/** The application's pool on PostgreSQL, as in `send-latency`. */
const POOL = 20;
/** Issue 26: send() with the catalog at most 1.1× the same send() without one, at p99. */
const RATIO_TARGET = { op: "<=", value: 1.1 } as const;

/** The catalog's schema of `order.created`: 10 fields, as an application would check an order. */
const ORDER = v.object({
  id: v.pipe(v.string(), v.startsWith("ord_"), v.maxLength(64)),
  customerEmail: v.pipe(v.string(), v.email()),
  total: v.pipe(v.number(), v.integer(), v.minValue(0)),
  itemCount: v.pipe(v.number(), v.integer(), v.minValue(1)),
  currency: v.picklist(["EUR", "USD", "GBP"]),
  paid: v.boolean(),
  placedAt: v.pipe(v.string(), v.isoTimestamp()),
  shippingAddress: v.object({
    line1: v.pipe(v.string(), v.minLength(1)),
    city: v.string(),
    postalCode: v.string(),
    country: v.pipe(v.string(), v.length(2)),
  }),
  tags: v.pipe(v.array(v.string()), v.maxLength(20)),
  note: v.optional(v.pipe(v.string(), v.maxLength(500))),
});
type Order = InferInput<typeof ORDER>;

const CURRENCIES = ["EUR", "USD", "GBP"] as const;
const EPOCH = Date.UTC(2026, 11, 1);

/** The i-th order (~400 bytes of JSON): every field varies with `i`, a note on every third. */
function order(i: number): Order {
  return {
    id: `ord_${String(i).padStart(10, "0")}`,
    customerEmail: `customer${i % 1000}@example.com`,
    total: 1_999 + (i % 500) * 7,
    itemCount: 1 + (i % 5),
    currency: CURRENCIES[i % 3]!,
    paid: i % 4 !== 0,
    placedAt: new Date(EPOCH + i * 1_000).toISOString(),
    shippingAddress: {
      line1: `${1 + (i % 200)} Rue de Rivoli`,
      city: "Paris",
      postalCode: "75001",
      country: "FR",
    },
    tags: i % 2 === 0 ? ["standard"] : ["gift", "express"],
    ...(i % 3 === 0 ? { note: "Leave it with the concierge, please." } : {}),
  };
}

let made: ReturnType<typeof makeEvents> | undefined;
const makeEvents = () =>
  core.defineEvents({
    [TYPE]: {
      schema: ORDER,
      description: "An order was placed.",
      examples: [order(1)],
    },
  });
/** The scenario's catalog, made on first use. */
const events = () => {
  made ??= makeEvents();
  return made;
};

/**
 * The three Postel instances on one storage: without a catalog, a second one without a catalog (the
 * A/A control: what two identical sides differ by on this machine, noise alone), with the catalog.
 */
type Side = "none" | "control" | "catalog";
const SIDES: Side[] = ["none", "control", "catalog"];
type Sends = Record<Side, (data: Order) => Promise<unknown>>;
type Latencies = Record<Side, number[]>;
const noLatencies = (): Latencies => ({ none: [], control: [], catalog: [] });

/**
 * The orders a round takes the sides in: all 6, in turn, so every side is as often first, second and
 * last, and follows each other side as often (a rotation would put each after the same one).
 */
const ROUND_ORDERS: Side[][] = SIDES.flatMap((a) =>
  SIDES.filter((b) => b !== a).map((b) => [a, b, SIDES.find((c) => c !== a && c !== b)!]),
);

/**
 * `count` rounds of sequential sends, one caller: each round sends the same order through every
 * instance, in the next of `ROUND_ORDERS`.
 */
async function sequential(sends: Sends, count: number, next: () => number): Promise<Latencies> {
  const latencies = noLatencies();
  for (let i = 0; i < count; i++) {
    const data = order(next());
    for (const side of ROUND_ORDERS[i % ROUND_ORDERS.length]!) {
      const started = performance.now();
      await sends[side](data);
      latencies[side].push(performance.now() - started);
    }
  }
  return latencies;
}

/**
 * About `count` sends per side, `IN_FLIGHT` at a time: each of the `IN_FLIGHT` lanes awaits one send
 * after another, taking the sides in turn (the lanes start on different sides), each send timed from
 * its issue.
 */
async function concurrent(
  sends: Sends,
  count: number,
  next: () => number,
): Promise<Latencies & { rate: number }> {
  const latencies = noLatencies();
  const perLane = Math.ceil((SIDES.length * count) / IN_FLIGHT);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async (_, lane) => {
      for (let j = 0; j < perLane; j++) {
        const side = SIDES[(lane + j) % SIDES.length]!;
        const data = order(next());
        const t0 = performance.now();
        await sends[side](data);
        latencies[side].push(performance.now() - t0);
      }
    }),
  );
  const total = SIDES.reduce((sum, side) => sum + latencies[side].length, 0);
  return { ...latencies, rate: (total / (performance.now() - started)) * 1000 };
}

/**
 * The same catalog, its schema's `validate` timed: how long the validation takes inside `send()`,
 * between a caller's I/O (caches cold), rather than in a tight loop. Each call appends its ms to
 * `into`; the timing adds two `performance.now()` calls, so it runs in a phase of its own.
 */
function timedCatalog(into: number[]) {
  const standard = ORDER["~standard"];
  const validate: typeof standard.validate = (data) => {
    const started = performance.now();
    const result = standard.validate(data);
    into.push(performance.now() - started);
    return result;
  };
  const catalog = core.defineEvents({
    [TYPE]: {
      schema: { "~standard": { ...standard, validate } },
      description: "An order was placed.",
      examples: [order(1)],
    },
  });
  into.length = 0; // defineEvents checked the example
  return catalog;
}

const INPUTS = Array.from({ length: 1_024 }, (_, i) => order(i));

/** ns per call of `fn`, each awaited, over `iterations` calls cycling through 1,024 orders. */
async function nsPerOp(iterations: number, fn: (data: Order) => unknown): Promise<number> {
  const inputs = INPUTS;
  const started = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) await fn(inputs[i & 1_023]!);
  return Number(process.hrtime.bigint() - started) / iterations;
}

/**
 * The run whose ratio `side[i] / base[i]` is the median one (for an even count, the lower middle).
 * The sides of a run were measured together, so the table keeps them paired: a median of each
 * column could put one run's catalog beside another's baseline.
 */
function medianRatioRun(side: readonly number[], base: readonly number[]): number {
  const order = side.map((value, i) => ({ i, ratio: value / base[i]! })).sort((a, b) => a.ratio - b.ratio);
  return order[Math.floor((order.length - 1) / 2)]!.i;
}

interface StorageRuns {
  label: string;
  /** Per phase and percentile, per side: every run's figure. */
  figures: Record<string, Record<Side, number[]>>;
  /** The schema's `validate()` timed inside `send()` (µs), every run's p50 and p99. */
  inValidation: { p50: number[]; p99: number[] };
}

/** One storage: the three Postel instances on it, a warm-up, then `scale.runs` runs of both variants. */
async function measureStorage(
  label: string,
  storage: Storage<unknown>,
  { scale, log }: ScenarioContext,
): Promise<StorageRuns> {
  const plain = Postel({ outbound: { storage } });
  const twin = Postel({ outbound: { storage } });
  const checked = Postel({ outbound: { storage, events: events() } });
  const sends: Sends = {
    none: (data) => plain.outbound.send({ type: TYPE, data }),
    control: (data) => twin.outbound.send({ type: TYPE, data }),
    catalog: (data) => checked.outbound.send({ type: TYPE, data }),
  };
  let n = 0;
  const next = () => n++;
  // What is stored must be the same on both sides, or the comparison is not of the same send.
  const data = order(next());
  const [a, b] = [await plain.outbound.send({ type: TYPE, data }), await sends.catalog(data)] as [
    { id: string },
    { id: string },
  ];
  const stored = await Promise.all([a.id, b.id].map((id) => plain.outbound.messages.get(id)));
  if (JSON.stringify(stored[0]?.data) !== JSON.stringify(stored[1]?.data)) {
    throw new Error(`send-catalog: the catalog stored another payload than the plain send() (${label})`);
  }
  await sequential(sends, WARM_UP_ROUNDS, next);
  await concurrent(sends, WARM_UP_ROUNDS, next);
  const inside: number[] = [];
  const probe = Postel({ outbound: { storage, events: timedCatalog(inside) } });
  const probeSend = (data: Order) => probe.outbound.send({ type: TYPE, data });
  for (let i = 0; i < WARM_UP_ROUNDS; i++) await probeSend(order(next()));

  const figures: StorageRuns["figures"] = {};
  const inValidation: StorageRuns["inValidation"] = { p50: [], p99: [] };
  const add = (key: string, side: Side, value: number) => {
    figures[key] ??= noLatencies();
    figures[key][side].push(value);
  };
  const ms = (value: number) => value.toFixed(2);
  // p50 none / control / catalog ms (control ÷ none, catalog ÷ none, catalog − none)
  const figuresAt = (l: Latencies, p: number) => {
    const [none, control, catalog] = SIDES.map((side) => percentile(l[side], p)) as [number, number, number];
    const delta = Math.round((catalog - none) * 1_000);
    return (
      `p${p} ${ms(none)} / ${ms(control)} / ${ms(catalog)} ms ` +
      `(${(control / none).toFixed(2)}×, ${(catalog / none).toFixed(2)}×, ${delta < 0 ? "" : "+"}${delta} µs)`
    );
  };
  const count = scale.catalogSends.toLocaleString("en-US");
  for (let run = 1; run <= scale.runs; run++) {
    const one = await sequential(sends, scale.catalogSends, next);
    log(
      `  ${label} run ${run}/${scale.runs}, one caller, ${count} sends per side, none / control / catalog: ` +
        `${figuresAt(one, 50)}; ${figuresAt(one, 99)}`,
    );
    const many = await concurrent(sends, scale.catalogSends, next);
    log(
      `  ${label} run ${run}/${scale.runs}, ${IN_FLIGHT} in flight, ~${count} sends per side, none / control / catalog: ` +
        `${figuresAt(many, 50)}; ${figuresAt(many, 99)} (${Math.round(many.rate).toLocaleString("en-US")} sends/s)`,
    );
    inside.length = 0;
    for (let i = 0; i < scale.catalogSends; i++) await probeSend(order(next()));
    const us = (p: number) => percentile(inside, p) * 1_000;
    log(
      `  ${label} run ${run}/${scale.runs}, the schema's validate() inside send(), one caller, ${count} sends: ` +
        `p50 ${us(50).toFixed(1)} µs, p99 ${us(99).toFixed(1)} µs`,
    );
    inValidation.p50.push(us(50));
    inValidation.p99.push(us(99));
    for (const [variant, latencies] of [
      ["one caller", one],
      [`${IN_FLIGHT} in flight`, many],
    ] as const) {
      for (const p of [50, 99]) {
        for (const side of SIDES) add(`${variant}, p${p}`, side, percentile(latencies[side], p));
      }
    }
  }
  return { label, figures, inValidation };
}

/**
 * Issue 26's proof: `send()` with a 10-field valibot schema in an event catalog beside the same
 * `send()` without one, on PostgreSQL and on a SQLite file, sends taking turns between Postel
 * instances on one storage (with a second one without a catalog as an A/A control); and the
 * validation alone, in process.
 */
export const sendCatalog: Scenario = {
  name: "send-catalog",
  storage: "postgres",
  description:
    "send() with a 10-field catalog schema vs without, PostgreSQL and SQLite, calls alternating (p99 ≤ 1.1×)",
  async run(context) {
    const { scale, log } = context;
    const parse: number[] = [];
    const validate: number[] = [];
    const stringify: number[] = [];
    const standard = ORDER["~standard"];
    const calls = {
      parse: (data: Order) => events().parse(TYPE, data),
      validate: (data: Order) => standard.validate(data),
      stringify: (data: Order) => JSON.stringify(data),
    };
    // Warmed up first, all three: the first measured would otherwise pay for V8's optimisation.
    for (const call of Object.values(calls)) await nsPerOp(WARM_UP_CALLS, call);
    for (let run = 1; run <= scale.runs; run++) {
      parse.push(await nsPerOp(scale.catalogParses, calls.parse));
      validate.push(await nsPerOp(scale.catalogParses, calls.validate));
      stringify.push(await nsPerOp(scale.catalogParses, calls.stringify));
      log(
        `  validation alone, run ${run}/${scale.runs}: catalog.parse() ${Math.round(parse.at(-1) ?? 0)} ns/op, ` +
          `schema ~standard.validate() ${Math.round(validate.at(-1) ?? 0)} ns/op, ` +
          `JSON.stringify(data) ${Math.round(stringify.at(-1) ?? 0)} ns/op`,
      );
    }

    const results: StorageRuns[] = [];
    const database = await createBenchDatabase();
    const pool = postgres(database.url, { max: POOL, onnotice: () => {} });
    try {
      results.push(
        await measureStorage("PostgreSQL", PostgresStorage({ sql: pool }, { migrate: false }), context),
      );
    } finally {
      await pool.end({ timeout: 5 });
      await database.drop();
    }
    const file = await createBenchFile({ migrate: true });
    const storage = SqliteStorage({ url: file.url });
    try {
      results.push(await measureStorage("SQLite", storage, context));
    } finally {
      await storage.close();
      await file.remove();
    }

    const metrics: Metric[] = [];
    for (const { label, figures, inValidation } of results) {
      for (const [name, runs] of Object.entries(figures)) {
        for (const side of ["catalog", "control"] as const) {
          const run = medianRatioRun(runs[side], runs.none);
          metrics.push({
            scenario: "send-catalog",
            name: `${label}, ${name}, ${side === "catalog" ? "catalog" : "A/A control (no catalog)"}`,
            unit: "ms",
            postel: runs[side][run]!,
            postelRuns: runs[side],
            naive: runs.none[run]!,
            naiveRuns: runs.none,
            ...(side === "catalog" && name.endsWith("p99") ? { ratioTarget: RATIO_TARGET } : {}),
          });
        }
      }
      for (const p of ["p50", "p99"] as const) {
        metrics.push({
          scenario: "send-catalog",
          name: `${label}, the schema's validate() inside send(), one caller, ${p}`,
          unit: "µs",
          postel: median(inValidation[p]),
          postelRuns: inValidation[p],
        });
      }
    }
    const op = (name: string, runs: number[]): Metric => ({
      scenario: "send-catalog",
      name,
      unit: "ns/op",
      postel: median(runs),
      postelRuns: runs,
    });
    metrics.push(
      op("validation alone: catalog.parse(type, data), awaited", parse),
      op("validation alone: the schema's ~standard.validate(data)", validate),
      op("for scale: JSON.stringify(data)", stringify),
    );
    metrics[0]!.note =
      `baseline: the same send() without a catalog, on the same storage, taking turns call by call with ` +
      `the catalog's and with a second instance without one (the A/A control: noise alone); a row's ` +
      `figures are both from the run with the median ratio, not two medians of different runs ` +
      `(${scale.catalogSends.toLocaleString("en-US")} sends per side per run; SQLite synchronous=full, ` +
      `PostgreSQL a ${POOL}-connection pool); issue 26: catalog ≤ 1.1× at p99`;
    return metrics;
  },
};
