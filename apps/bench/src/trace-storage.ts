import type { Storage } from "@postel/core";

/**
 * Diagnostics: wraps every method of `storage` to count its calls and time them, and prints the
 * table to stderr when the process exits (`BENCH_TRACE=1`). Shows where a worker waits.
 */
export function traceStorage(storage: Storage<unknown>): void {
  const timings = new Map<string, { calls: number; ms: number }>();
  const methods = storage as unknown as Record<string, unknown>;
  for (const [name, method] of Object.entries(methods)) {
    if (typeof method !== "function") continue;
    const original = method as (...args: unknown[]) => Promise<unknown>;
    methods[name] = async (...args: unknown[]) => {
      const started = performance.now();
      try {
        return await original(...args);
      } finally {
        const entry = timings.get(name) ?? { calls: 0, ms: 0 };
        entry.calls += 1;
        entry.ms += performance.now() - started;
        timings.set(name, entry);
      }
    };
  }
  // Scenarios end their workers with SIGTERM: print then too.
  process.once("SIGTERM", () => process.exit(0));
  process.on("exit", () => {
    for (const [name, { calls, ms }] of timings) {
      console.error(`[trace] ${name}: ${calls} calls, ${(ms / calls).toFixed(2)} ms average`);
    }
  });
}
