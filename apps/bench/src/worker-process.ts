import { cpuMs, peakRss, preciseNow, report, type WorkerCommand, type WorkerReport } from "./protocol.js";

/** What a worker process (Postel, naive, minimal) plugs into `serveWorker`. */
export interface WorkerLoop {
  /** Deliveries after which the process reports `done`; 0 = run until stopped. */
  target: number;
  /** Starts delivering (on `go`; the clock starts here). `started` is reported once it resolves. */
  start(): void | Promise<void>;
  /** Stops delivering and releases connections (on `stop`). */
  stop(): Promise<void>;
}

/**
 * The orchestrator protocol every worker process shares: `go` starts the loop and the clock,
 * progress is reported every second, `done` (elapsed time, CPU, peak RSS) once `target` deliveries are
 * counted, and `stop` ends the loop and disconnects. Returns the function that counts deliveries.
 */
export function serveWorker(loop: WorkerLoop): (count: number) => void {
  let delivered = 0;
  let startedAt = 0;
  let cpuAtStart = 0;
  let finished = false;
  const progress = setInterval(() => report<WorkerReport>({ type: "progress", delivered }), 1_000);
  progress.unref();

  process.on("message", async (command: WorkerCommand) => {
    if (command.type === "go") {
      startedAt = preciseNow();
      cpuAtStart = cpuMs();
      await loop.start();
      report<WorkerReport>({ type: "started" });
    } else {
      await loop.stop();
      report<WorkerReport>({ type: "stopped", delivered, peakRssBytes: await peakRss() });
      process.disconnect();
    }
  });

  return (count) => {
    delivered += count;
    if (finished || loop.target === 0 || delivered < loop.target) return;
    finished = true;
    const elapsedMs = preciseNow() - startedAt;
    const cpu = cpuMs() - cpuAtStart;
    void peakRss().then((peakRssBytes) =>
      report<WorkerReport>({ type: "done", delivered, elapsedMs, peakRssBytes, cpuMs: cpu }),
    );
  };
}
