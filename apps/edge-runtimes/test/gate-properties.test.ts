// The shared receiving-gate property suite, on a D1DedupStore over a real local D1 database in workerd.
import { runGateProperties } from "@postel/core/testing";
import { type D1DatabaseLike, D1DedupStore } from "@postel/signing/inbound";
import type { Miniflare } from "miniflare";
import { type Bundle, bundle } from "./bundle.js";
import { workerd } from "./runtimes.js";

let mf: Miniflare | undefined;
let built: Bundle | undefined;

runGateProperties({
  name: "d1",
  // Each run goes through Miniflare's binding proxy to workerd: fewer runs than the in-process stores.
  numRuns: 100,
  dedup: async () => {
    built = await bundle("d1-claims.ts", workerd.target);
    mf = workerd.miniflare(built);
    return D1DedupStore((await mf.getD1Database("DB")) as unknown as D1DatabaseLike);
  },
  destroy: async () => {
    await mf?.dispose();
    built?.remove();
  },
});
