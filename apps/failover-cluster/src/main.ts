// `pnpm --filter @postel/failover-cluster start`: brings up a pg_auto_failover pair on 127.0.0.1,
// prints how to reach it, and fails over on a key: s (clean stop of the primary), k (SIGKILL of it),
// c (cut every client session), q or Ctrl-C (stop everything and delete the cluster's files).
import { emitKeypressEvents } from "node:readline";
import { startFailoverCluster } from "./failover-cluster.js";

const started = performance.now();
process.stderr.write("starting a monitor, a primary and a synchronous standby on 127.0.0.1…\n");
const cluster = await startFailoverCluster({ database: "postel" });
process.stderr.write(`up in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
process.stdout.write(
  `${cluster.url("primary")}\n` +
    cluster.nodes.map((node) => `  ${node.name}: ${cluster.nodeUrl(node)}\n`).join("") +
    `  files and logs: ${cluster.dir}\n` +
    "keys: s stop the primary · k kill it · c cut the sessions · q quit\n",
);

let busy = false;
const strike = async (what: string, act: () => Promise<unknown>) => {
  if (busy) return;
  busy = true;
  const at = Date.now();
  try {
    const old = await cluster.primary();
    await act();
    const { node, writableAt } = await cluster.waitForWritablePrimary(
      90_000,
      what === "cut" ? undefined : old,
    );
    process.stderr.write(
      `${what}: ${node.name} took a write ${((writableAt - at) / 1000).toFixed(1)} s later\n`,
    );
    await cluster.waitForHealthy();
    process.stderr.write("primary + synchronous standby again\n");
  } catch (error) {
    process.stderr.write(`${what} failed: ${String(error)}\n${await cluster.diagnostics()}\n`);
  } finally {
    busy = false;
  }
};
const quit = async () => {
  await cluster.close();
  process.exit(0);
};
process.on("SIGINT", () => void quit());
process.on("SIGTERM", () => void quit());
if (process.stdin.isTTY) {
  emitKeypressEvents(process.stdin);
  process.stdin.setRawMode(true);
  process.stdin.on("keypress", (_text: string, key: { name?: string; ctrl?: boolean }) => {
    if (key.name === "q" || (key.ctrl && key.name === "c")) void quit();
    if (key.name === "s") void strike("stop", () => cluster.stopPrimary());
    if (key.name === "k") void strike("kill", () => cluster.killPrimary());
    if (key.name === "c") void strike("cut", () => cluster.cutSessions("postel"));
  });
}
