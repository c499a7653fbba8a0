// A namespace import: under `--baseline` this module is loaded against an older @postel/signing, which
// may have no verifyAsync() (then only the Node figures are measured).
import { createHmac, timingSafeEqual } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import * as signing from "@postel/signing";
import * as inbound from "@postel/signing/inbound";
import type { Scenario } from "../scenario.js";
import { type Metric, median } from "../stats.js";

/** Verifications of each kind per run, after `WARM_UP` of each (V8 optimises the first ones). */
const ITERATIONS = { full: 50_000, quick: 10_000 };
const WARM_UP = 20_000;

type Verify = (request: { body: Uint8Array; headers: Record<string, string> }, now: number) => unknown;
interface Module {
  createVerifier: (keys: string[]) => { verify: Verify; verifyAsync?: Verify };
  Receiver: typeof inbound.Receiver;
}

/** A 1 KB JSON body, signed as a Postel sender signs it (Standard Webhooks v1). */
function request() {
  const data = { id: "ord_0000000001", note: "x".repeat(900), total: 1_999, currency: "EUR" };
  const text = JSON.stringify({ type: "order.created", timestamp: new Date().toISOString(), data });
  const body = new TextEncoder().encode(text);
  const secret = signing.generateSecret();
  const timestamp = new Date();
  const headers = { ...signing.sign({ id: "msg_1", timestamp, body: text, keys: [secret] }) } as Record<
    string,
    string
  >;
  return { secret, body, headers, now: timestamp.getTime() };
}

/**
 * The web build of the gate, on Node: `@postel/signing` and its `/inbound` bundled as a Web-only
 * platform would (esbuild, platform neutral, no `node` condition), so its crypto is Web Crypto's
 * `crypto.subtle`. Null when that build does not exist (a baseline from before it).
 */
async function webBuild(): Promise<{ module: Module; dispose: () => Promise<void> } | null> {
  const library = process.env["POSTEL_BENCH_LIBRARY"];
  let esbuild: typeof import("esbuild");
  try {
    esbuild = await import("esbuild");
  } catch {
    return null;
  }
  const dir = await mkdtemp(join(tmpdir(), "postel-receive-"));
  const out = join(dir, "web.mjs");
  try {
    await esbuild.build({
      stdin: {
        contents:
          'export { createVerifier } from "@postel/signing"; export { Receiver } from "@postel/signing/inbound";',
        // Under `--baseline`, that commit's packages (core links its signing), as the hooks resolve imports.
        resolveDir: library === undefined ? process.cwd() : join(library, "packages", "core"),
        loader: "js",
      },
      bundle: true,
      format: "esm",
      platform: "neutral",
      mainFields: ["module", "main"],
      conditions: ["worker", "browser"],
      outfile: out,
      logLevel: "silent",
    });
  } catch {
    await rm(dir, { recursive: true, force: true });
    return null;
  }
  const module = (await import(pathToFileURL(out).href)) as Module;
  return { module, dispose: () => rm(dir, { recursive: true, force: true }) };
}

/** ns per call, `iterations` calls in a row. */
function nsSync(iterations: number, fn: () => unknown): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) fn();
  return Number(process.hrtime.bigint() - started) / iterations;
}

/** ns per call, each awaited. */
async function nsAsync(iterations: number, fn: () => unknown): Promise<number> {
  const started = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) await fn();
  return Number(process.hrtime.bigint() - started) / iterations;
}

/**
 * Issue 31: receiving on Node, through the Node path (node:crypto, synchronous) and the Web Crypto
 * path (the web build, asynchronous), beside a bare HMAC check of the same request, in one run. The
 * issue asks that the Node path keep today's cost: run with `--baseline <commit before it>` to see
 * this build's figures beside that commit's (the baseline has no web build, so no Web Crypto row).
 */
export const receive: Scenario = {
  name: "receive",
  storage: "none",
  description: "verifying a 1 KB webhook on Node: Node path and Web Crypto path vs a bare HMAC check",
  async run({ scale, log }) {
    const iterations = scale.quick ? ITERATIONS.quick : ITERATIONS.full;
    const { secret, body, headers, now } = request();
    const key = Buffer.from(secret.slice("whsec_".length), "base64");
    const signature = Buffer.from(headers["webhook-signature"]!.split(",")[1]!);
    const prefix = `${headers["webhook-id"]}.${headers["webhook-timestamp"]}.`;
    // What a hand-written receiver does: the HMAC in base64, compared in constant time with the header's.
    const bare = () => {
      const expected = Buffer.from(createHmac("sha256", key).update(prefix).update(body).digest("base64"));
      return expected.length === signature.length && timingSafeEqual(expected, signature);
    };
    const node = signing.createVerifier([secret]) as unknown as { verify: Verify; verifyAsync?: Verify };
    const web = await webBuild();
    const webVerifier = web?.module.createVerifier([secret]);
    const gate = (module: Pick<Module, "Receiver">) =>
      module.Receiver({ sources: { shop: { verify: secret } }, clock: { now: () => now } });
    const nodeGate = gate(inbound);
    const webGate = web ? gate(web.module) : null;
    const input = { body, headers };
    // Each kind timed over `n` calls: synchronous ones in a plain loop, the others each awaited.
    const cases: Record<string, (n: number) => number | Promise<number>> = {
      bare: (n) => nsSync(n, bare),
      nodeSync: (n) => nsSync(n, () => node.verify(input, now)),
      nodeGate: (n) => nsAsync(n, () => nodeGate.verify("shop", input)),
    };
    const nodeAsync = node.verifyAsync?.bind(node);
    if (nodeAsync) cases["nodeAsync"] = (n) => nsAsync(n, () => nodeAsync(input, now));
    const webAsync = webVerifier?.verifyAsync?.bind(webVerifier);
    if (webAsync) cases["webAsync"] = (n) => nsAsync(n, () => webAsync(input, now));
    if (webGate) cases["webGate"] = (n) => nsAsync(n, () => webGate.verify("shop", input));
    // Every kind must accept the request before anything is timed (a refusal throws here).
    if (!bare()) throw new Error("receive: the bare HMAC check refused the request");
    node.verify(input, now);
    await nodeGate.verify("shop", input);
    await webAsync?.(input, now);
    await webGate?.verify("shop", input);
    for (const measure of Object.values(cases)) await measure(WARM_UP);
    const runs: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
    for (let run = 1; run <= scale.runs; run++) {
      // One after another, each kind once per run: a busy moment touches them all alike.
      for (const [name, measure] of Object.entries(cases))
        runs[name]!.push((await measure(iterations)) / 1_000);
      log(
        `  receive run ${run}/${scale.runs}, µs per 1 KB verification: ` +
          Object.entries(runs)
            .map(([name, values]) => `${name} ${values.at(-1)!.toFixed(2)}`)
            .join(", "),
      );
    }
    await web?.dispose();
    const row = (name: string, label: string): Metric[] =>
      runs[name] === undefined
        ? []
        : [
            {
              scenario: "receive",
              name: label,
              unit: "µs",
              postel: median(runs[name]!),
              postelRuns: runs[name]!,
              naive: median(runs["bare"]!),
              naiveRuns: runs["bare"]!,
              note: 'baseline = a bare HMAC check of the same 1 KB request: createHmac(…).digest("base64") against the header\'s signature with timingSafeEqual',
            },
          ];
    return [
      ...row("nodeSync", "verify(), Node path (node:crypto, synchronous)"),
      ...row("nodeAsync", "verifyAsync(), Node path"),
      ...row("nodeGate", "the gate (Receiver.verify: verify, parse the JSON body), Node build"),
      ...row("webAsync", "verifyAsync(), Web Crypto path (the web build on Node)"),
      ...row("webGate", "the gate (Receiver.verify: verify, parse the JSON body), web build on Node"),
    ];
  },
};
