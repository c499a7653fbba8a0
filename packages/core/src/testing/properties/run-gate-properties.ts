import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { afterAll, beforeAll, describe, test } from "vitest";
import { ManualClock } from "../../clock.js";
import type { DedupStore } from "@postel/signing/inbound";
import { type GateResponse, type InboundRequest, Receiver } from "@postel/signing/inbound";
import { type Fc, loadFastCheck } from "./bad-values.js";
import {
  DEFAULT_FIGURES_DIR,
  figuresFile,
  newFigures,
  type PropertyFigures,
  reportFigures,
} from "./figures.js";
import { propertySettings } from "./settings.js";
import { applyTamper, GATE_NOW, SIGNED_SOURCES, type Tamper, tamper } from "./signed-requests.js";

/** How a dedup store wires itself into the shared receiving-gate property suite. */
export interface GatePropertyOptions<D extends DedupStore = DedupStore> {
  /** Shown in the top-level `describe` and names the figures file (`"memory"`, `"postgres"`, ...). */
  name: string;
  /** A fresh dedup store for every source of the gate; called once for the whole suite. */
  dedup: () => D | Promise<D>;
  /** Tear down what `dedup` made; runs after the suite. */
  destroy?: (store: D) => Promise<void>;
  /** Runs per property (default 500; `FC_RUNS` overrides). */
  numRuns?: number;
  /** fast-check seed (default 14; `FC_SEED` overrides). */
  seed?: number;
  /** Where the figures JSON goes (default `.generated/property-figures/` in the working directory); false for none. */
  figuresDir?: string | false;
}

const SOURCE_NAMES = Object.keys(SIGNED_SOURCES);

/**
 * Register the receiving-gate property suite (vitest `describe`/`test` blocks) for one dedup store:
 * `Receiver.handle` gets validly signed requests (Standard Webhooks HMAC and Ed25519, Stripe,
 * GitHub) with their body or signed headers tampered with, before and after the authentic request.
 * Every tampered request must be answered 4xx with a JSON error code and never reach the handler,
 * and the authentic one must reach it exactly once. Needs fast-check installed.
 * @example
 * // test/gate-properties.test.ts of a storage package
 * import { runGateProperties } from "@postel/core/testing";
 * import { SqliteDedupStore } from "../src/index.js";
 *
 * runGateProperties({ name: "sqlite", dedup: () => SqliteDedupStore({ url: `file:${tempFile()}` }) });
 */
export function runGateProperties<D extends DedupStore>(options: GatePropertyOptions<D>): void {
  const suite = `gate properties: ${options.name}`;
  const settings = propertySettings(options, 500);
  const figures: PropertyFigures[] = [];
  let loaded: Fc | undefined;
  let store: D | undefined;

  describe(suite, () => {
    beforeAll(async () => {
      loaded = await loadFastCheck();
      store = await options.dedup();
    });
    afterAll(async () => {
      reportFigures(figures, figuresFile(suite), options.figuresDir ?? DEFAULT_FIGURES_DIR);
      if (store) await options.destroy?.(store);
    });

    test("tampered signed requests never reach the handler and get a 4xx with a JSON error code", async () => {
      const fc = loaded;
      if (!fc || !store) throw new Error("runGateProperties: the suite's beforeAll did not finish");
      const f = newFigures(suite, "Receiver.handle", settings);
      figures.push(f);
      const dedup = store;
      const sources = Object.fromEntries(
        Object.entries(SIGNED_SOURCES).map(([name, source]) => [name, { verify: source.verify, dedup }]),
      );
      const receiver = Receiver({ sources, clock: new ManualClock(GATE_NOW) });
      // Ids unique per run (and per suite, for a store that outlives it): always new to the dedup store.
      const prefix = `msg_${randomUUID().slice(0, 8)}`;
      let sequence = 0;
      const started = performance.now();
      const property = fc.asyncProperty(
        fc.constantFrom(...SOURCE_NAMES),
        fc.jsonValue({ maxDepth: 2 }),
        fc.array(tamper(fc), { minLength: 1, maxLength: 2 }),
        async (name, data, tampers: Tamper[]) => {
          const source = SIGNED_SOURCES[name]!;
          const id = `${prefix}_${++sequence}`;
          const authentic = source.sign(Buffer.from(JSON.stringify({ data })), id);
          const tampered = tampers.reduce((request, t) => applyTamper(request, source.signed, t), authentic);
          // An insert undone by a delete leaves the request authentic: not a tampered request.
          if (sameRequest(tampered, authentic)) return;
          let handled = 0;
          const handler = () => {
            handled++;
          };
          // Before the authentic request, and after it: a rejected copy must not poison dedup, and a
          // processed id must not let a tampered copy through as a "duplicate".
          judge(f, await receiver.handle(name, tampered, handler), handled);
          const response = await receiver.handle(name, authentic, handler);
          if (response.status === 200) f.accepted++;
          if (response.status !== 200 || handled !== 1) {
            throw new Error(
              `the authentic request got ${response.status} ${response.body}, handled ${handled} times`,
            );
          }
          judge(f, await receiver.handle(name, tampered, handler), handled - 1);
        },
      );
      try {
        await fc.assert(property, settings);
      } finally {
        f.ms = performance.now() - started;
      }
    });
  });
}

const sameRequest = (a: InboundRequest, b: InboundRequest) =>
  Buffer.from(a.body).equals(b.body) && isDeepStrictEqual(a.headers, b.headers);

/**
 * Counts one tampered request's answer (`handled`: how often the handler ran for it, 0 or more);
 * throws unless it is a 4xx JSON error naming its code and the handler did not run.
 */
function judge(f: PropertyFigures, response: GateResponse, handled: number): void {
  f.tried++;
  if (handled !== 0 || response.status < 400) {
    f.falseAccepts++;
    throw new Error(
      `accepted a tampered request: ${response.status} ${response.body}, handler ran ${handled} times`,
    );
  }
  const code = errorCode(response.body);
  if (response.status >= 500 || code === undefined || response.headers["x-postel-error"] !== code) {
    f.uncoded++;
    throw new Error(`answered a tampered request ${response.status} ${response.body}`);
  }
  f.refused++;
  f.codes[code] = (f.codes[code] ?? 0) + 1;
}

function errorCode(body: string): string | undefined {
  try {
    const code = (JSON.parse(body) as { error?: { code?: unknown } }).error?.code;
    return typeof code === "string" ? code : undefined;
  } catch {
    return undefined;
  }
}
