import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";

const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));

/** A child Node process running a TypeScript fixture from the package sources (through tsx). */
export interface Child {
  /** Resolves when the child printed its `ready` line (modules loaded, database opened). */
  ready: Promise<void>;
  /** Releases the child's barrier: it starts its work when told `go`. */
  go(): void;
  /** Resolves with the child's last stdout line (its JSON result) once it exited with code 0. */
  result: Promise<string>;
  /** Sends `signal` (SIGTERM: finish up and print the result; SIGKILL: die now) unless it has exited. */
  kill(signal: NodeJS.Signals): void;
}

/** Spawn `test/fixtures/<script>` with `args`, resolving workspace packages to their sources. */
export function startChild(script: string, args: string[]): Child {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--conditions=@postel/source", "--import", "tsx", `test/fixtures/${script}`, ...args],
    { cwd: PACKAGE_DIR, stdio: ["pipe", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.startsWith("ready\n")) markReady();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const result = once(child, "exit").then(([code]) => {
    if (code !== 0) throw new Error(`${script} exited with ${code}:\n${stderr}\n${stdout}`);
    return stdout.trim().split("\n").at(-1) ?? "";
  });
  // A child that dies before `ready` must fail the test, not hang it.
  result.catch(() => markReady());
  const kill = (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  return { ready, go: () => child.stdin?.end("go\n"), result, kill };
}

/** Start every child, wait until all are ready, then release them at once; resolves with their results. */
export async function runTogether(children: Child[]): Promise<string[]> {
  await Promise.all(children.map((child) => child.ready));
  for (const child of children) child.go();
  return Promise.all(children.map((child) => child.result));
}
