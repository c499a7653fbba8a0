import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SERVER_URL } from "./database.js";

/** Where Debian's `pgbouncer` package installs it (`.ci/run` installs it). */
export const PGBOUNCER_BINARY = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].find((path) =>
  existsSync(path),
);

/** A PgBouncer in transaction-pooling mode in front of the test server, on a port of its own. */
export interface PgBouncer {
  /** `url` (a database on the test server) through PgBouncer. */
  through(url: string): string;
  stop(): Promise<void>;
}

/**
 * Starts PgBouncer with `pool_mode = transaction` (every transaction may run on another server
 * connection: no named prepared statements, no session state, no LISTEN), trusting every user as the
 * test server does. Started as root (CI), it drops to the `postgres` user, as PgBouncer requires.
 */
export async function startPgBouncer(): Promise<PgBouncer> {
  if (PGBOUNCER_BINARY === undefined)
    throw new Error("pgbouncer is not installed (apt-get install pgbouncer)");
  const server = new URL(SERVER_URL);
  const dir = mkdtempSync(join(tmpdir(), "postel-pgbouncer-"));
  chmodSync(dir, 0o777);
  const port = await freePort();
  const users = join(dir, "users.txt");
  writeFileSync(users, `"${decodeURIComponent(server.username) || "postgres"}" ""\n`);
  const config = join(dir, "pgbouncer.ini");
  writeFileSync(
    config,
    [
      "[databases]",
      `* = host=${server.hostname} port=${server.port || 5432}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${users}`,
      "pool_mode = transaction",
      "max_client_conn = 500",
      "default_pool_size = 20",
      // Drivers send these at startup; PgBouncer would refuse the connection over them.
      "ignore_startup_parameters = extra_float_digits,options,search_path",
      `logfile = ${join(dir, "pgbouncer.log")}`,
      `pidfile = ${join(dir, "pgbouncer.pid")}`,
    ].join("\n"),
  );
  for (const file of [users, config]) chmodSync(file, 0o644);
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(PGBOUNCER_BINARY, [...(asRoot ? ["-u", "postgres"] : []), config], {
    stdio: "ignore",
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  try {
    await waitForPort(port, exited, () => readLog(dir));
  } catch (error) {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    through(url) {
      const target = new URL(url);
      target.port = String(port);
      target.hostname = "127.0.0.1";
      return target.toString();
    },
    async stop() {
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function readLog(dir: string): string {
  const log = join(dir, "pgbouncer.log");
  return existsSync(log) ? readFileSync(log, "utf8").slice(-2_000) : "(no log)";
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitForPort(port: number, exited: Promise<number | null>, log: () => string): Promise<void> {
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  for (let waited = 0; waited < 10_000; waited += 50) {
    if (gone) throw new Error(`pgbouncer exited at start:\n${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.destroy();
        resolve(true);
      }).on("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`pgbouncer did not listen on port ${port} within 10 s:\n${log()}`);
}
