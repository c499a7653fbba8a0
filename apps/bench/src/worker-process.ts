import { cpuMs, peakRss, preciseNow, report, type WorkerCommand, type WorkerReport } from "./protocol.js";

/** What a worker process (Postel, naive, minimal) plugs into `serveWorker`. */
export interface WorkerLoop {
  /** Deliveries after which the process reports `done`; 0 = run until stopped. */
  target: number;
  /** Starts delivering (on `go`; the clock starts here). `started` is reported once it resolves. */
  start(): void | Promise<void>;
  /** Stops delivering and releases connections (on `stop`). */
  stop(): Promise<void>;
  /**
   * Resolves once every counted delivery's outcome is in the database, for loops that count a
   * delivery when its task returns and whose queue records it later (the peers); `done` and its
   * clock wait for it.
   */
  recorded?(): Promise<void>;
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
      report<WorkerReport>({ type: "started", at: startedAt });
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
    void (async () => {
      await loop.recorded?.();
      const elapsedMs = preciseNow() - startedAt;
      const cpu = cpuMs() - cpuAtStart;
      const peakRssBytes = await peakRss();
      report<WorkerReport>({ type: "done", delivered, elapsedMs, peakRssBytes, cpuMs: cpu });
    })();
  };
}

/**
 * The naive baselines' shape: `concurrency` loops side by side, each calling `deliverOne` until it
 * finds nothing (then it waits 100 ms). `close` runs once every loop has stopped.
 */
export function serveLoops(
  config: { target: number; concurrency: number },
  deliverOne: () => Promise<boolean>,
  close: () => Promise<void> | void,
): void {
  let running = false;
  let loops: Promise<void>[] = [];
  const loop = async () => {
    while (running) {
      if (await deliverOne()) counted(1);
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const counted = serveWorker({
    target: config.target,
    start() {
      running = true;
      loops = Array.from({ length: config.concurrency }, loop);
    },
    async stop() {
      running = false;
      await Promise.all(loops);
      await close();
    },
  });
}
