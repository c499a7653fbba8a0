import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";

/** A child process of the bench, spoken to over IPC. Every wait has a deadline. */
export class Child<Report extends { type: string }, Command> {
  readonly #process: ChildProcess;
  readonly #queue: Report[] = [];
  readonly #waiters = new Set<() => void>();
  #exited = false;
  /** Called for every `progress` report (optional). */
  onProgress: ((report: Report) => void) | undefined;

  private constructor(
    readonly name: string,
    child: ChildProcess,
  ) {
    this.#process = child;
    child.on("message", (message: Report) => {
      if (message.type === "progress") this.onProgress?.(message);
      else this.#queue.push(message);
      this.#notify();
    });
    child.on("exit", () => {
      this.#exited = true;
      this.#notify();
    });
  }

  /** Starts `dist/<script>.js` with its JSON configuration. */
  static start<R extends { type: string }, C>(script: string, config: unknown): Child<R, C> {
    const path = fileURLToPath(new URL(`./${script}.js`, import.meta.url));
    // BENCH_CPU_PROFILE=<dir> writes a V8 CPU profile of every child (open it in Chrome DevTools).
    const profile = process.env["BENCH_CPU_PROFILE"];
    // BENCH_NODE_ARGS="--trace-deopt ..." passes V8 flags NODE_OPTIONS refuses to every child.
    const extra = (process.env["BENCH_NODE_ARGS"] ?? "").split(" ").filter((arg) => arg !== "");
    const child = fork(path, [JSON.stringify(config)], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      execArgv: [...(profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : []), ...extra],
    });
    return new Child<R, C>(script, child);
  }

  get pid(): number | undefined {
    return this.#process.pid;
  }

  send(command: Command): void {
    this.#process.send(command as object);
  }

  /** Sends a command the process may no longer need: it may have finished and disconnected already. */
  offer(command: Command): void {
    if (this.#process.connected) this.#process.send(command as object, () => {});
  }

  /** The next report of the given type (earlier reports of other types are dropped). */
  async next<T extends Report["type"]>(type: T, timeoutMs: number): Promise<Extract<Report, { type: T }>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.#queue.findIndex((report) => report.type === type);
      if (index >= 0) return this.#queue.splice(0, index + 1).pop() as Extract<Report, { type: T }>;
      if (this.#exited) throw new Error(`${this.name} exited before reporting "${type}"`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${this.name} did not report "${type}" within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.#waiters.add(done);
      });
    }
  }

  /** Waits up to `timeoutMs` for the process to exit by itself; true when it did. */
  async exited(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.#exited && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return this.#exited;
  }

  /** Ends the process: SIGTERM, then SIGKILL after `graceMs` if it has not exited. */
  async kill(graceMs = 5_000): Promise<void> {
    if (this.#exited) return;
    this.#process.kill("SIGTERM");
    if (!(await this.exited(graceMs))) this.#process.kill("SIGKILL");
  }

  #notify(): void {
    for (const wake of this.#waiters) wake();
    this.#waiters.clear();
  }
}
