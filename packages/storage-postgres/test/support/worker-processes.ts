import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const FIXTURE = fileURLToPath(new URL("../fixtures/worker.mjs", import.meta.url));
const BUILT = fileURLToPath(new URL("../../dist/index.js", import.meta.url));

/** A Postel worker running in its own OS process (test/fixtures/worker.mjs). */
export interface WorkerProcess {
  name: string;
  child: ChildProcess;
  /** Everything it wrote to stderr (errors it recovered from, e.g. while the database was down). */
  stderr(): string;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
  alive(): boolean;
}

const started = new Set<WorkerProcess>();

/**
 * Starts a worker process on the built packages and waits until it has started its worker pool.
 * The child processes run `dist/`, so build first (turbo's `test` task depends on `build`).
 */
export async function startWorker(
  url: string,
  name: string,
  leaseDuration = "2s",
  pool: { concurrency?: number; batchSize?: number } = {},
): Promise<WorkerProcess> {
  if (!existsSync(BUILT)) {
    throw new Error(
      `${BUILT} is missing: the multi-process tests run the built packages. ` +
        "Run `pnpm turbo run build --filter @postel/storage-postgres...` (or `pnpm turbo run test`) first.",
    );
  }
  const child = spawn(process.execPath, [FIXTURE, url, name, leaseDuration], {
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      ...(pool.concurrency === undefined ? {} : { POSTEL_TEST_CONCURRENCY: String(pool.concurrency) }),
      ...(pool.batchSize === undefined ? {} : { POSTEL_TEST_BATCH_SIZE: String(pool.batchSize) }),
    },
  });
  let stdout = "";
  let stderr = "";
  let running = true;
  const exited = new Promise<void>((resolve) =>
    child.once("exit", () => {
      running = false;
      resolve();
    }),
  );
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const worker: WorkerProcess = { name, child, stderr: () => stderr, exited, alive: () => running };
  started.add(worker);
  const deadline = Date.now() + 20_000;
  while (!stdout.includes("ready")) {
    if (!running) throw new Error(`worker ${name} exited before it was ready:\n${stderr}`);
    if (Date.now() > deadline) throw new Error(`worker ${name} not ready within 20 s:\n${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return worker;
}

/** SIGKILLs a worker (a crash: no cleanup, its leases stay behind) and waits until it is gone. */
export async function crash(worker: WorkerProcess): Promise<void> {
  worker.child.kill("SIGKILL");
  await worker.exited;
}

/** Ends every worker still running (afterEach): SIGTERM, then SIGKILL after 5 s. */
export async function stopAllWorkers(): Promise<void> {
  const running = [...started].filter((worker) => worker.alive());
  started.clear();
  await Promise.all(
    running.map(async (worker) => {
      worker.child.kill("SIGTERM");
      const timer = setTimeout(() => worker.child.kill("SIGKILL"), 5_000);
      await worker.exited;
      clearTimeout(timer);
    }),
  );
}
