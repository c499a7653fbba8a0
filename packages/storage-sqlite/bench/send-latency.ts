// `send()` latency for one caller on a SQLite file: p50/p90/p99/max of sequential calls, in rounds.
// Run from packages/storage-sqlite:
//   node --conditions=@postel/source --import tsx bench/send-latency.ts [calls=2000] [full|normal] [rounds=3]
// No workers run: this is the caller's cost (one write transaction, and its fsync with "full").
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Postel } from "@postel/core";
import { SqliteStorage } from "../src/index.js";

const calls = Number(process.argv[2] ?? 2_000);
const synchronous = process.argv[3] === "normal" ? "normal" : "full";
const rounds = Number(process.argv[4] ?? 3);
const WARM_UP = 200;

interface Round {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** One round on a fresh file: warm up, then time `calls` sequential sends. */
async function round(): Promise<Round> {
  const dir = mkdtempSync(join(tmpdir(), "postel-send-latency-"));
  try {
    const storage = SqliteStorage({ url: `file:${join(dir, "postel.db")}` }, { synchronous });
    await storage.migrate();
    const postel = Postel({ outbound: { storage } });
    const event = (i: number) => ({
      type: "order.created",
      data: { order: i, total: 1250, currency: "EUR" },
    });
    for (let i = 0; i < WARM_UP; i++) await postel.outbound.send(event(i));
    const samples: number[] = [];
    for (let i = 0; i < calls; i++) {
      const started = performance.now();
      await postel.outbound.send(event(i));
      samples.push(performance.now() - started);
    }
    await postel.close();
    samples.sort((a, b) => a - b);
    const at = (q: number) => samples[Math.min(samples.length - 1, Math.ceil(q * samples.length) - 1)] ?? 0;
    return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: samples.at(-1) ?? 0 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const results: Round[] = [];
for (let i = 0; i < rounds; i++) results.push(await round());
const median = (pick: (r: Round) => number) => {
  const sorted = results.map(pick).sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? 0;
};
const row = (r: Round) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, `${v.toFixed(3)} ms`]));
const table: Record<string, Record<string, string>> = {};
results.forEach((r, i) => {
  table[`round ${i + 1}`] = row(r);
});
table["median"] = row({
  p50: median((r) => r.p50),
  p90: median((r) => r.p90),
  p99: median((r) => r.p99),
  max: median((r) => r.max),
});
console.log(`send() latency: one caller, ${calls} sequential calls per round, synchronous=${synchronous}`);
console.table(table);
