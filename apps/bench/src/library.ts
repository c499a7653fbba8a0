import { register } from "node:module";

// Preloaded with `node --import` (through NODE_OPTIONS, so every child process of the bench gets it
// too) when POSTEL_BENCH_LIBRARY names a baseline worktree: installs library-hooks.ts.
const library = process.env["POSTEL_BENCH_LIBRARY"];
if (library) register("./library-hooks.js", import.meta.url, { data: { library } });
