/**
 * A real high-availability PostgreSQL pair for failover tests: a pg_auto_failover monitor and two data
 * nodes (a primary and a synchronous hot standby), all on 127.0.0.1 with ports of their own, in a
 * `mkdtemp` directory under /tmp, `--auth trust` and `--no-ssl`. Debian's `postgresql-15-auto-failover`
 * (pg_autoctl 2.0) runs them; PostgreSQL and pg_autoctl refuse to run as root, so a root test process
 * runs them as the `postgres` OS user.
 *
 * pg_auto_failover's defaults take ~50 s from a dead primary to a writable standby (measured here: 50.5 s,
 * 20 s until the monitor calls the primary unhealthy, then 30 s waiting for it to demote itself). The
 * harness shortens them so that a failover takes a few seconds:
 *
 * On the monitor (GUCs in its postgresql.auto.conf, in place before its first start; checked after it):
 * - `pgautofailover.health_check_period` 5000 → 1000 ms: how often the monitor connects to each node.
 * - `pgautofailover.health_check_timeout` 5000 → 2000 ms: how long a health check's connection attempt
 *   may take. A stopped or killed node refuses at once, so this only bounds a hung one; 2 s stays well
 *   above what a connection takes at load average 10.
 * - `pgautofailover.health_check_max_retries` 2 → 1 and `health_check_retry_delay` 2000 → 500 ms: one
 *   retry, half a second later, before a node is marked unhealthy.
 * - `pgautofailover.node_considered_unhealthy_timeout` 20000 → 2000 ms: how long the keeper must also
 *   have been silent. A failover needs both (failed health checks and a silent keeper), so a keeper that
 *   is merely slow on a loaded machine does not trigger one while its Postgres answers.
 * - `pgautofailover.primary_demote_timeout` 30000 → 3000 ms: after the standby has stopped replicating,
 *   how long the monitor waits for the old primary to report itself demoted before it promotes the
 *   standby for writes. A stopped or killed primary never reports, so every failover waits this long.
 *   Kept above the keepers' network_partition_timeout (2 s), as the defaults are (30 s > 20 s): a primary
 *   cut off from the monitor and its standby has demoted itself before the standby takes writes.
 * - `pgautofailover.startup_grace_period` 10000 → 2000 ms: no failover within this long of the monitor's
 *   start; a scenario may strike as soon as the cluster is up.
 *
 * On each keeper (`pg_autoctl config set` before its first `pg_autoctl run`):
 * - `timeout.network_partition_timeout` 20 → 2 s: a primary that can reach neither the monitor nor a
 *   standby demotes itself after this long (see primary_demote_timeout).
 * - `timeout.postgresql_restart_failure_timeout` 20 → 2 s: a keeper that cannot restart its Postgres
 *   reports it down after this long, so a test that breaks Postgres under a live keeper sees a failover
 *   in seconds. (`timeout.prepare_promotion_catchup` and `prepare_promotion_walreceiver` are unused by
 *   pg_autoctl 2.0, says `man pg_autoctl config set`; left alone.)
 *
 * Measured with these on a 2-core machine (test/failover-cluster.test.ts, 7 runs; load average 4–6 from
 * other tests running meanwhile), from the strike to the first committed INSERT on the other node:
 * 5.3–6.8 s after a clean stop, 5.2–7.2 s after SIGKILL (≈2 s to call the node unhealthy, the 3 s demote
 * timeout, ~1 s for the keepers to act on the monitor's decisions). The old primary is back as a
 * synchronous standby (pg_rewind, catching up) 3.2–6.0 s later. Starting the cluster takes 13–18 s. At
 * load average 10–17 (ten busy loops besides, 6 runs): 6.3–8.2 s and 5.2–7.2 s, rejoins in 3.7–10.7 s,
 * start in 27–42 s.
 *
 * Also set, on every instance: `unix_socket_directories` in the temp dir (not the system's
 * /var/run/postgresql) and `shared_buffers = 32MB` (pg_autoctl would size it from the machine's RAM,
 * 6 GB here, for each of the three instances). The monitor's `listen_addresses` is set to 127.0.0.1 with
 * `pg_autoctl config set` before its first run; during `pg_autoctl create monitor` it listens on `*`
 * for about a second, but its pg_hba.conf only admits loopback addresses.
 *
 * Every pg_autoctl process runs under a small Perl reaper (perl is a dependency of postgresql-common). It
 * is a child subreaper, so the Postgres processes that a SIGKILL orphans are reaped at once rather than
 * left to PID 1 (which, in this VM, reaps only every few seconds, and in some containers never), and it
 * has PR_SET_PDEATHSIG: if the test process dies without close(), the keepers get SIGTERM and stop their
 * Postgres; the next startFailoverCluster removes the dir left behind.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import {
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres, { type Sql } from "postgres";

/** PostgreSQL 15's binaries on Debian (override with POSTEL_TEST_PG_BIN). */
export const PG_BIN = process.env["POSTEL_TEST_PG_BIN"] ?? "/usr/lib/postgresql/15/bin";

/** Where Debian's `postgresql-15-auto-failover` (via `pg-auto-failover-cli`) installs pg_autoctl. */
export const PG_AUTOCTL_BINARY = ["/usr/bin/pg_autoctl", join(PG_BIN, "pg_autoctl")].find((path) =>
  existsSync(path),
);

/** One of the two data nodes. */
export interface FailoverNode {
  name: string;
  port: number;
  pgdata: string;
}

/** A monitor and two data nodes managed by pg_auto_failover. */
export interface FailoverCluster {
  /**
   * A multi-host URL over both nodes, e.g. `postgres://postgres@127.0.0.1:P1,127.0.0.1:P2/postel?target_session_attrs=primary`.
   * `primary` (the default; Postel's own multi-host pool uses it) skips a node in recovery. Beware
   * `read-write` with postgres.js 3.4: it checks only `default_transaction_read_only`, which a hot
   * standby reports `off`, and it tries the hosts round-robin, so a reconnection can land on the standby.
   * (pg_auto_failover keeps a standby it is promoting `default_transaction_read_only = on` until the
   * monitor confirms it: `primary` connects to it then and its writes fail with 25006 for those few
   * seconds.) `any` leaves the parameter out (postgres.js refuses the literal `any`).
   */
  url(targetSessionAttrs?: "primary" | "read-write" | "any"): string;
  /** URL of one node alone (the cluster's database unless `database` is given). */
  nodeUrl(node: FailoverNode, database?: string): string;
  nodes: [FailoverNode, FailoverNode];
  /** The temp dir: data directories, pg_autoctl's files and the logs (`logs/*.log`). */
  dir: string;
  /** The node that is primary now, as the monitor says (waits, up to 60 s, while a failover is under way). */
  primary(): Promise<FailoverNode>;
  /** The node that is a secondary now, as the monitor says (waits, up to 60 s, for there to be one). */
  standby(): Promise<FailoverNode>;
  /**
   * Resolves once a node (other than `notNode`) commits a real INSERT, polling every ~50 ms, with the
   * epoch ms (`Date.now()`) at which that first write succeeded; throws after `timeoutMs` (60 s).
   */
  waitForWritablePrimary(
    timeoutMs?: number,
    notNode?: FailoverNode,
  ): Promise<{ node: FailoverNode; writableAt: number }>;
  /**
   * Resolves once the monitor reports a primary and a secondary (reported and assigned states, both nodes
   * healthy), so the next scenario can strike again; waits for a strike's rejoin first. Throws after
   * `timeoutMs` (120 s).
   */
  waitForHealthy(timeoutMs?: number): Promise<void>;
  /**
   * Fails over by a clean stop of the primary: `pg_autoctl stop` (its keeper stops Postgres with
   * `pg_ctl stop -m fast`; stopping Postgres alone would not do, the keeper would restart it at once).
   * Resolves with the stopped node once it is down. Unless `rejoin: false`, the node is restarted as soon
   * as the monitor has promoted the standby, and rejoins as a standby (see waitForHealthy).
   */
  stopPrimary(options?: { rejoin?: boolean }): Promise<FailoverNode>;
  /**
   * Fails over by SIGKILL of the primary's Postgres (postmaster and children) together with its
   * pg_autoctl keeper, which would otherwise restart Postgres before the monitor noticed. Resolves once
   * every one of them is gone; rejoins as stopPrimary does.
   */
  killPrimary(options?: { rejoin?: boolean }): Promise<FailoverNode>;
  /** Brings a stopped or killed node back (starts its keeper again) so that it rejoins as a standby. */
  restart(node: FailoverNode): Promise<void>;
  /**
   * pg_terminate_backend of every client session of `database` on both nodes (waiting for each to end),
   * but not replication, the monitor's health checks or pg_autoctl's own sessions, so both nodes stay
   * healthy. Returns how many sessions were ended.
   */
  cutSessions(database: string): Promise<number>;
  /** Keeper states from the monitor, its latest events and the tail of every log, for failure messages. */
  diagnostics(): Promise<string>;
  /**
   * Stops everything (keepers, Postgres, monitor), kills what did not stop, deletes the temp dir. Safe
   * after a failed test and when called twice.
   */
  close(): Promise<void>;
}

const MONITOR_SETTINGS: Record<string, string> = {
  "pgautofailover.health_check_period": "1000",
  "pgautofailover.health_check_timeout": "2000",
  "pgautofailover.health_check_max_retries": "1",
  "pgautofailover.health_check_retry_delay": "500",
  "pgautofailover.node_considered_unhealthy_timeout": "2000",
  "pgautofailover.primary_demote_timeout": "3000",
  "pgautofailover.startup_grace_period": "2000",
};

const KEEPER_SETTINGS: Record<string, string> = {
  "timeout.network_partition_timeout": "2",
  "timeout.postgresql_restart_failure_timeout": "2",
};

/** The states in which the monitor lets a node take writes (a lone node is `single`). */
const PRIMARY_STATES = new Set(["primary", "wait_primary", "single"]);

const PREFIX = "postel-failover-";

/**
 * Runs a command as its child, reaping every orphan adopted as child subreaper (prctl 36) until none is
 * left, forwarding termination signals to it, and getting SIGTERM when the test process dies (prctl 1,
 * PR_SET_PDEATHSIG). Once the command has exited, whatever it left behind is SIGKILLed.
 */
const REAPER = String.raw`use strict; use warnings;
my ($parent, @command) = @ARGV;
my $child = 0;
for my $signal (qw(TERM INT QUIT HUP)) { $SIG{$signal} = sub { $child ? kill($signal, $child) : exit(1) } }
if (eval { require "syscall.ph"; 1 }) {
  syscall(&SYS_prctl, 36, 1, 0, 0, 0);
  syscall(&SYS_prctl, 1, 15, 0, 0, 0);
} else {
  warn "reaper: no syscall.ph, so no subreaper and no parent-death signal\n";
}
exit(1) if getppid() != $parent;
$child = fork() // die "reaper: fork: $!\n";
if ($child == 0) { exec { $command[0] } @command or die "reaper: exec $command[0]: $!\n" }
sub adopted {
  my @pids;
  for my $stat (glob "/proc/[0-9]*/stat") {
    open(my $fh, "<", $stat) or next;
    my $line = <$fh> // next;
    push @pids, $1 if $line =~ /^(\d+) .*\) \S+ (\d+) / && $2 == $$;
  }
  return @pids;
}
my ($status, $done) = (0, 0);
while (1) {
  my $pid = waitpid(-1, 0);
  if ($pid == -1) { last if $!{ECHILD}; next }
  if ($pid == $child) { $status = $?; $done = 1 }
  kill("KILL", adopted()) if $done;
}
exit($status & 127 ? 128 + ($status & 127) : $status >> 8);
`;

/** A pg_autoctl process under the reaper. */
interface Service {
  child: ChildProcess;
  running: boolean;
  exited: Promise<void>;
  exitCode: number | null;
}

interface NodeState {
  name: string;
  goal: string;
  reported: string;
  health: number;
  running: boolean;
}

/**
 * Builds the monitor and the two nodes, waits until they are primary + secondary (well under 60 s; see
 * the top of this file for timings) and returns the cluster. `database` (default `postel`) is created
 * through pg_autoctl's `--dbname`, so it exists on both nodes. Ports are free ones from the OS unless
 * `basePort` is given (then basePort, +1 and +2 for the monitor and the nodes).
 */
export async function startFailoverCluster(
  options: { database?: string; basePort?: number } = {},
): Promise<FailoverCluster> {
  if (PG_AUTOCTL_BINARY === undefined) {
    throw new Error("pg_autoctl is not installed (apt-get install postgresql-15-auto-failover)");
  }
  if (!existsSync(join(PG_BIN, "pg_ctl"))) throw new Error(`no PostgreSQL binaries in ${PG_BIN}`);
  const database = options.database ?? "postel";
  if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`unsupported database name ${database}`);
  sweepStaleClusters();
  const ports = options.basePort === undefined ? await freePorts(3) : await freePorts(3, options.basePort);
  const cluster = new PgAutoFailoverCluster(ports as [number, number, number], database);
  try {
    await cluster.start();
  } catch (error) {
    await cluster.close();
    throw error;
  }
  return cluster;
}

class PgAutoFailoverCluster implements FailoverCluster {
  readonly dir: string;
  readonly nodes: [FailoverNode, FailoverNode];
  private readonly database: string;
  private readonly monitorPort: number;
  private readonly monitorData: string;
  private readonly socketDir: string;
  private readonly logDir: string;
  private readonly owner: { uid: number; gid: number } | undefined;
  private readonly env: NodeJS.ProcessEnv;
  private monitorService: Service | undefined;
  private readonly keepers = new Map<string, Service>();
  private readonly oneShots = new Set<Service>();
  /** A strike's pending restart of the struck node, by node name; waitForHealthy awaits it. */
  private readonly rejoins = new Map<string, Promise<void>>();
  private monitorSql: Sql | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;

  constructor(ports: [number, number, number], database: string) {
    this.database = database;
    this.monitorPort = ports[0];
    this.owner = postgresUser();
    this.dir = mkdtempSync(join(tmpdir(), PREFIX));
    this.monitorData = join(this.dir, "monitor");
    this.socketDir = join(this.dir, "sock");
    this.logDir = join(this.dir, "logs");
    this.nodes = [
      { name: "node1", port: ports[1], pgdata: join(this.dir, "node1") },
      { name: "node2", port: ports[2], pgdata: join(this.dir, "node2") },
    ];
    // So that a later run can tell this dir from a live cluster's once this process is gone.
    writeFileSync(join(this.dir, "owner.pid"), String(process.pid));
    writeFileSync(join(this.dir, "reaper.pl"), REAPER);
    const xdg = join(this.dir, "xdg");
    const dirs = [this.socketDir, this.logDir, ...["config", "data", "run"].map((name) => join(xdg, name))];
    for (const path of dirs) mkdirSync(path, { recursive: true, mode: 0o700 });
    if (this.owner)
      for (const path of [this.dir, xdg, ...dirs]) chownSync(path, this.owner.uid, this.owner.gid);
    // A clean environment: none of the test process's PG* variables, and pg_autoctl's config, state and
    // pid files (XDG_*) inside the temp dir instead of the postgres user's home and /tmp/pg_autoctl.
    this.env = {
      PATH: `${PG_BIN}:/usr/local/bin:/usr/bin:/bin`,
      PG_CONFIG: join(PG_BIN, "pg_config"),
      HOME: this.dir,
      LANG: "C",
      LC_ALL: "C",
      PGHOST: this.socketDir,
      XDG_CONFIG_HOME: join(xdg, "config"),
      XDG_DATA_HOME: join(xdg, "data"),
      XDG_RUNTIME_DIR: join(xdg, "run"),
    };
  }

  async start(): Promise<void> {
    const [node1, node2] = this.nodes;
    const common = { unix_socket_directories: this.socketDir, shared_buffers: "32MB" };
    await Promise.all([
      this.initdb(this.monitorData, "monitor", { ...common, ...MONITOR_SETTINGS }),
      // node2 starts as a pg_basebackup of node1, postgresql.auto.conf included.
      this.initdb(node1.pgdata, node1.name, common),
    ]);
    await this.runOnce(
      "monitor",
      [
        ...["create", "monitor", "--pgdata", this.monitorData, "--pgport", String(this.monitorPort)],
        ...["--hostname", "127.0.0.1", "--auth", "trust", "--no-ssl", "--pgctl", join(PG_BIN, "pg_ctl")],
      ],
      90_000,
    );
    await this.autoctl([
      "config",
      "set",
      "--pgdata",
      this.monitorData,
      "postgresql.listen_addresses",
      "127.0.0.1",
    ]);
    this.monitorService = this.spawnService("monitor", ["run", "--pgdata", this.monitorData]);
    this.monitorSql = postgres(`postgres://postgres@127.0.0.1:${this.monitorPort}/pg_auto_failover`, {
      max: 1,
      connect_timeout: 5,
      onnotice: () => {},
    });
    const monitor = this.monitorSql;
    await this.until("the monitor to accept connections", 60_000, async () => {
      this.assertRunning("monitor", this.monitorService);
      return (await monitor`SELECT 1`.then(() => true).catch(() => false)) || undefined;
    });
    // A GUC misspelled, or renamed in another pg_auto_failover version, would be dropped with a warning.
    const settings = await monitor<{ name: string; setting: string }[]>`
      SELECT name, setting FROM pg_settings WHERE name LIKE 'pgautofailover.%'`;
    for (const [name, value] of Object.entries(MONITOR_SETTINGS)) {
      const actual = settings.find((row) => row.name === name)?.setting;
      if (actual !== value) throw new Error(`monitor setting ${name} is ${actual}, not ${value}`);
    }

    await this.createNode(node1, 90_000);
    // node2's registration waits for node1 to run as a primary.
    await this.until(`${node1.name} to accept connections`, 60_000, async () => {
      this.assertRunning(node1.name, this.keepers.get(node1.name));
      return (
        (await this.query(node1, "postgres", "SELECT 1")
          .then(() => true)
          .catch(() => false)) || undefined
      );
    });
    await this.createNode(node2, 180_000);
    await this.waitForHealthy(120_000);
    const primary = await this.primary();
    await this.query(
      primary,
      "postgres",
      "CREATE TABLE IF NOT EXISTS postel_failover_probe (node text NOT NULL, at timestamptz NOT NULL DEFAULT now())",
    );
  }

  url(targetSessionAttrs: "primary" | "read-write" | "any" = "primary"): string {
    const hosts = this.nodes.map((node) => `127.0.0.1:${node.port}`).join(",");
    const query = targetSessionAttrs === "any" ? "" : `?target_session_attrs=${targetSessionAttrs}`;
    return `postgres://postgres@${hosts}/${this.database}${query}`;
  }

  nodeUrl(node: FailoverNode, database = this.database): string {
    return `postgres://postgres@127.0.0.1:${node.port}/${database}`;
  }

  primary(): Promise<FailoverNode> {
    return this.until("a primary (per the monitor)", 60_000, async () => {
      const states = await this.states().catch(() => undefined);
      const primaries = (states ?? []).filter(
        (s) => PRIMARY_STATES.has(s.goal) && PRIMARY_STATES.has(s.reported),
      );
      return primaries.length === 1 ? this.node(primaries[0]!.name) : undefined;
    });
  }

  standby(): Promise<FailoverNode> {
    return this.until("a secondary (per the monitor)", 60_000, async () => {
      const states = await this.states().catch(() => undefined);
      const standby = (states ?? []).find((s) => s.goal === "secondary" && s.reported === "secondary");
      return standby ? this.node(standby.name) : undefined;
    });
  }

  async waitForWritablePrimary(
    timeoutMs = 60_000,
    notNode?: FailoverNode,
  ): Promise<{ node: FailoverNode; writableAt: number }> {
    const candidates = this.nodes.filter((node) => node.name !== notNode?.name);
    const clients = new Map(candidates.map((node) => [node.name, this.probeClient(node)]));
    const deadline = Date.now() + timeoutMs;
    const errors = new Map<string, string>();
    try {
      while (Date.now() < deadline) {
        const attempts = candidates.map(async (node) => {
          const sql = clients.get(node.name)!;
          const outcome = await raced(
            sql`INSERT INTO postel_failover_probe (node) VALUES (${node.name})`,
            3_000,
          );
          if (outcome === "ok") return { node, writableAt: Date.now() };
          errors.set(
            node.name,
            outcome === "timeout" ? "the INSERT did not commit within 3 s" : String(outcome),
          );
          // A commit stuck waiting for a synchronous standby that is gone: drop the session rather than
          // cancel it (a cancelled wait commits locally, which would look like a successful write).
          if (outcome === "timeout") {
            void sql.end({ timeout: 0 });
            clients.set(node.name, this.probeClient(node));
          }
          return undefined;
        });
        // The first node to commit, without waiting for a slower attempt on the other one.
        const written = await new Promise<{ node: FailoverNode; writableAt: number } | undefined>(
          (resolve) => {
            let pending = attempts.length;
            for (const attempt of attempts) {
              void attempt.then((result) => {
                pending -= 1;
                if (result || pending === 0) resolve(result);
              });
            }
          },
        );
        if (written) return written;
        await sleep(50);
      }
    } finally {
      await Promise.all([...clients.values()].map((sql) => sql.end({ timeout: 1 })));
    }
    const last = [...errors].map(([name, error]) => `${name}: ${error}`).join("; ");
    throw new Error(
      `no node${notNode ? ` other than ${notNode.name}` : ""} took a write within ${timeoutMs / 1000} s (${last})\n` +
        (await this.diagnostics()),
    );
  }

  async waitForHealthy(timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    // A strike's rejoin first: its error says more than "not healthy".
    for (const rejoin of [...this.rejoins.values()]) {
      if (!(await settlesWithin(rejoin, deadline - Date.now()))) {
        throw new Error(
          `a struck node was not restarted within ${timeoutMs / 1000} s\n${await this.diagnostics()}`,
        );
      }
    }
    await this.until(
      "a primary and a secondary (per the monitor)",
      Math.max(1, deadline - Date.now()),
      async () => {
        for (const node of this.nodes) this.assertRunning(node.name, this.keepers.get(node.name));
        const states = await this.states().catch(() => undefined);
        if (
          states?.length !== 2 ||
          states.some((s) => s.health !== 1 || !s.running || s.goal !== s.reported)
        ) {
          return undefined;
        }
        const roles = states.map((s) => s.reported).sort();
        return roles[0] === "primary" && roles[1] === "secondary" ? true : undefined;
      },
    );
  }

  async stopPrimary(options: { rejoin?: boolean } = {}): Promise<FailoverNode> {
    const node = await this.primary();
    const keeper = this.runningKeeper(node);
    await this.autoctl(["stop", "--pgdata", node.pgdata]);
    await this.exitWithin(keeper, 60_000, `${node.name}'s pg_autoctl did not stop`);
    if (options.rejoin !== false) this.rejoinAfterFailover(node);
    return node;
  }

  async killPrimary(options: { rejoin?: boolean } = {}): Promise<FailoverNode> {
    const node = await this.primary();
    const keeper = this.runningKeeper(node);
    // The keeper, its services, the postmaster and the postmaster's children, in one go (the reaper
    // stays to reap them, then exits).
    for (const pid of descendants(keeper.child.pid!)) signal(pid, "SIGKILL");
    await this.exitWithin(keeper, 30_000, `${node.name}'s processes did not die of SIGKILL`);
    if (options.rejoin !== false) this.rejoinAfterFailover(node);
    return node;
  }

  async restart(node: FailoverNode): Promise<void> {
    if (this.closed) throw new Error("the cluster is closed");
    if (this.keepers.get(node.name)?.running) return;
    this.keepers.set(node.name, this.spawnService(node.name, ["run", "--pgdata", node.pgdata]));
  }

  async cutSessions(database: string): Promise<number> {
    const counts = await Promise.all(
      this.nodes.map(async (node) => {
        // The keepers talk to their own Postgres over the Unix socket (no client_addr); the monitor's
        // health checks and replication come as pgautofailover_* roles; this session is in `postgres`.
        const rows = await this.query<{ ended: number }>(
          node,
          "postgres",
          // MATERIALIZED: the filter runs first, so pg_terminate_backend never sees the other sessions.
          `WITH victims AS MATERIALIZED (
             SELECT pid FROM pg_stat_activity
             WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid()
               AND client_addr IS NOT NULL AND usename NOT LIKE 'pgautofailover%')
           SELECT (count(*) FILTER (WHERE pg_terminate_backend(pid, 10000)))::int AS ended FROM victims`,
          [database],
        );
        return rows[0]?.ended ?? 0;
      }),
    );
    return counts.reduce((sum, count) => sum + count, 0);
  }

  async diagnostics(): Promise<string> {
    const parts: string[] = [];
    if (existsSync(this.monitorData)) {
      for (const args of [
        ["show", "state"],
        ["show", "events", "--count", "15"],
      ]) {
        const output = await this.autoctl([...args, "--pgdata", this.monitorData], 10_000).catch(
          (error: unknown) => String(error),
        );
        parts.push(`$ pg_autoctl ${args.join(" ")}\n${output}`);
      }
    }
    for (const name of ["monitor", ...this.nodes.map((node) => node.name)]) {
      parts.push(`--- ${name}.log (pg_autoctl)\n${tail(join(this.logDir, `${name}.log`), 30)}`);
      const serverLogs = join(this.dir, name, "log");
      const latest = existsSync(serverLogs) ? readdirSync(serverLogs).sort().at(-1) : undefined;
      if (latest) parts.push(`--- ${name}/log/${latest} (Postgres)\n${tail(join(serverLogs, latest), 10)}`);
    }
    return parts.join("\n");
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    this.closed = true;
    await this.monitorSql?.end({ timeout: 1 }).catch(() => {});
    const services = [...this.keepers.values(), ...this.oneShots];
    if (this.monitorService) services.push(this.monitorService);
    const running = () => services.filter((service) => service.running);
    // SIGTERM, as `pg_autoctl stop` sends (the reaper forwards it): the keepers stop Postgres (fast).
    for (const service of running()) service.child.kill("SIGTERM");
    await settlesWithin(Promise.all(services.map((service) => service.exited)), 30_000);
    for (const service of running()) {
      for (const pid of descendants(service.child.pid!)) signal(pid, "SIGKILL");
    }
    await settlesWithin(Promise.all(services.map((service) => service.exited)), 10_000);
    for (const service of running()) service.child.kill("SIGKILL");
    killLeftovers(this.dir);
    rmSync(this.dir, { recursive: true, force: true, maxRetries: 3 });
  }

  private async createNode(node: FailoverNode, timeoutMs: number): Promise<void> {
    await this.runOnce(
      node.name,
      [
        ...["create", "postgres", "--pgdata", node.pgdata, "--pgport", String(node.port)],
        ...["--pghost", this.socketDir, "--listen", "127.0.0.1", "--hostname", "127.0.0.1"],
        ...["--name", node.name, "--username", "postgres", "--dbname", this.database],
        ...["--auth", "trust", "--no-ssl", "--pgctl", join(PG_BIN, "pg_ctl")],
        ...[
          "--monitor",
          `postgres://autoctl_node@127.0.0.1:${this.monitorPort}/pg_auto_failover?sslmode=disable`,
        ],
      ],
      timeoutMs,
    );
    for (const [key, value] of Object.entries(KEEPER_SETTINGS)) {
      await this.autoctl(["config", "set", "--pgdata", node.pgdata, key, value]);
    }
    this.keepers.set(node.name, this.spawnService(node.name, ["run", "--pgdata", node.pgdata]));
  }

  /** initdb with trust for every local and loopback connection, then `settings` in postgresql.auto.conf. */
  private async initdb(pgdata: string, log: string, settings: Record<string, string>): Promise<void> {
    await this.runCommand(
      log,
      join(PG_BIN, "initdb"),
      [
        "--pgdata",
        pgdata,
        "--username",
        "postgres",
        "--auth",
        "trust",
        "--encoding",
        "UTF8",
        "--locale",
        "C",
        "--no-sync",
      ],
      90_000,
    );
    const lines = Object.entries(settings).map(([key, value]) => `${key} = '${value}'`);
    writeFileSync(join(pgdata, "postgresql.auto.conf"), `${lines.join("\n")}\n`, { flag: "a" });
  }

  /** Schedules the struck node's restart for once the monitor has promoted the other node. */
  private rejoinAfterFailover(struck: FailoverNode): void {
    const rejoin = (async () => {
      // Restarted earlier, the keeper would find the monitor still counting on it as the primary.
      await this.until(`the monitor to promote the node other than ${struck.name}`, 120_000, async () => {
        if (this.closed) return true;
        const states = await this.states().catch(() => undefined);
        const old = states?.find((s) => s.name === struck.name);
        const promoted = states?.find(
          (s) => s.name !== struck.name && s.goal === s.reported && PRIMARY_STATES.has(s.goal),
        );
        return old && promoted && !PRIMARY_STATES.has(old.goal) ? true : undefined;
      });
      if (!this.closed) await this.restart(struck);
    })();
    // Reported by waitForHealthy; never an unhandled rejection.
    rejoin.catch(() => {});
    this.rejoins.set(struck.name, rejoin);
    void rejoin.then(
      () => this.rejoins.delete(struck.name),
      () => {},
    );
  }

  private async states(): Promise<NodeState[]> {
    const monitor = this.monitorSql;
    if (!monitor) throw new Error("the monitor is not running");
    return monitor<NodeState[]>`
      SELECT nodename AS name, goalstate::text AS goal, reportedstate::text AS reported, health,
        reportedpgisrunning AS running
      FROM pgautofailover.node ORDER BY nodeid`;
  }

  private node(name: string): FailoverNode {
    const node = this.nodes.find((candidate) => candidate.name === name);
    if (!node) throw new Error(`the monitor knows a node ${name} that this harness did not create`);
    return node;
  }

  private runningKeeper(node: FailoverNode): Service {
    const keeper = this.keepers.get(node.name);
    if (!keeper?.running) throw new Error(`${node.name}'s pg_autoctl is not running`);
    return keeper;
  }

  private assertRunning(name: string, service: Service | undefined): void {
    if (service?.running) return;
    if (this.rejoins.has(name)) return;
    throw new Error(
      `${name}'s pg_autoctl is not running (exit code ${service?.exitCode ?? "none"}); ` +
        `after a strike with rejoin: false, restart(node) brings it back\n${tail(join(this.logDir, `${name}.log`), 40)}`,
    );
  }

  private probeClient(node: FailoverNode): Sql {
    return postgres(this.nodeUrl(node, "postgres"), {
      max: 1,
      connect_timeout: 2,
      onnotice: () => {},
      connection: { application_name: "postel-failover-probe" },
    });
  }

  /** One query on a connection of its own (a few per scenario: no pool to keep). */
  private async query<T>(
    node: FailoverNode,
    database: string,
    text: string,
    parameters: string[] = [],
  ): Promise<T[]> {
    const sql = postgres(this.nodeUrl(node, database), { max: 1, connect_timeout: 5, onnotice: () => {} });
    try {
      return (await sql.unsafe(text, parameters)) as unknown as T[];
    } finally {
      await sql.end({ timeout: 1 });
    }
  }

  /** Polls `probe` every `intervalMs` until it returns a value; throws with diagnostics after `timeoutMs`. */
  private async until<T>(
    what: string,
    timeoutMs: number,
    probe: () => Promise<T | undefined>,
    intervalMs = 100,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) {
        throw new Error(
          `gave up after ${timeoutMs / 1000} s waiting for ${what}\n${await this.diagnostics()}`,
        );
      }
      await sleep(intervalMs);
    }
  }

  private async exitWithin(service: Service, timeoutMs: number, message: string): Promise<void> {
    if (await settlesWithin(service.exited, timeoutMs)) return;
    throw new Error(`${message} within ${timeoutMs / 1000} s\n${await this.diagnostics()}`);
  }

  /** `pg_autoctl …` that ends by itself (create, config, show, stop), as the postgres user. */
  private autoctl(args: string[], timeoutMs = 30_000): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        PG_AUTOCTL_BINARY!,
        args,
        { env: this.env, cwd: this.dir, timeout: timeoutMs, ...this.owner },
        (error, stdout, stderr) => {
          if (error) reject(new Error(`pg_autoctl ${args.join(" ")}: ${error.message}\n${stderr}`));
          else resolve(stdout);
        },
      );
    });
  }

  /** A pg_autoctl command that starts Postgres on its way (create): under the reaper, logged. */
  private runOnce(log: string, args: string[], timeoutMs: number): Promise<void> {
    return this.runCommand(log, PG_AUTOCTL_BINARY!, args, timeoutMs);
  }

  private async runCommand(log: string, command: string, args: string[], timeoutMs: number): Promise<void> {
    const service = this.spawnService(log, [command, ...args], true);
    this.oneShots.add(service);
    const finished = await settlesWithin(service.exited, timeoutMs);
    if (!finished) for (const pid of descendants(service.child.pid!)) signal(pid, "SIGKILL");
    await service.exited;
    this.oneShots.delete(service);
    if (!finished || service.exitCode !== 0) {
      throw new Error(
        `${command} ${args.join(" ")} ${finished ? `exited with ${service.exitCode}` : `did not finish within ${timeoutMs / 1000} s`}\n` +
          tail(join(this.logDir, `${log}.log`), 40),
      );
    }
  }

  /** Spawns `pg_autoctl args` (or `command...` when `raw`) under the reaper, detached, into logs/<log>.log. */
  private spawnService(log: string, args: string[], raw = false): Service {
    if (this.closed) throw new Error("the cluster is closed");
    const output = openSync(join(this.logDir, `${log}.log`), "a");
    const command = raw ? args : [PG_AUTOCTL_BINARY!, ...args];
    let child: ChildProcess;
    try {
      child = spawn("perl", [join(this.dir, "reaper.pl"), String(process.pid), ...command], {
        cwd: this.dir,
        env: this.env,
        detached: true,
        stdio: ["ignore", output, output],
        ...this.owner,
      });
    } finally {
      closeSync(output);
    }
    // The keepers must not keep the test process alive; close() (or the reaper's parent-death signal)
    // ends them.
    child.unref();
    const service: Service = {
      child,
      running: true,
      exitCode: null,
      exited: new Promise((resolve) => {
        child.once("exit", (code, signalName) => {
          service.running = false;
          service.exitCode = code ?? (signalName ? 128 : null);
          resolve();
        });
        // Not spawned at all (no perl, say): there will be no "exit".
        child.once("error", (error) => {
          service.running = false;
          writeFileSync(join(this.logDir, `${log}.log`), `spawn failed: ${error.message}\n`, { flag: "a" });
          resolve();
        });
      }),
    };
    return service;
  }
}

/** The `postgres` user's ids when this process is root (PostgreSQL refuses root); otherwise none. */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const entry = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((line) => line.startsWith("postgres:"));
  if (!entry) throw new Error("running as root, and there is no postgres user to run PostgreSQL as");
  const [, , uid, gid] = entry.split(":");
  return { uid: Number(uid), gid: Number(gid) };
}

/** pid → parent pid of every live process (zombies are dead already). */
function processTable(): Map<number, number> {
  const table = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    // The command name may hold spaces and parentheses: the fields after it start after the last ")".
    const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (state !== "Z" && state !== "X") table.set(Number(entry), Number(ppid));
  }
  return table;
}

/** Every live process below `root`, parents before children (not `root` itself). */
function descendants(root: number, table = processTable()): number[] {
  const found: number[] = [];
  let frontier = [root];
  while (frontier.length > 0) {
    const next = [...table].filter(([, ppid]) => frontier.includes(ppid)).map(([pid]) => pid);
    found.push(...next);
    frontier = next;
  }
  return found;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Gone already.
  }
}

/** SIGKILLs any postmaster that outlived its keeper in `dir` (the reaper died first, say), and its children. */
function killLeftovers(dir: string): void {
  if (!existsSync(dir)) return;
  const table = processTable();
  const pgdatas = readdirSync(dir).map((name) => join(dir, name));
  const backups = join(dir, "backup");
  if (existsSync(backups)) pgdatas.push(...readdirSync(backups).map((name) => join(backups, name)));
  for (const pgdata of pgdatas) {
    const pidFile = join(pgdata, "postmaster.pid");
    if (!existsSync(pidFile)) continue;
    const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
    if (!table.has(pid)) continue;
    let commandLine = "";
    try {
      commandLine = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {
      continue;
    }
    if (!commandLine.includes(pgdata)) continue; // the pid was reused
    for (const victim of [pid, ...descendants(pid, table)]) signal(victim, "SIGKILL");
  }
}

/**
 * Removes the temp dirs of clusters whose test process died without close() (their reapers got SIGTERM
 * and stopped the keepers then), killing any postmaster still running there.
 */
function sweepStaleClusters(): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(PREFIX)) continue;
    const dir = join(tmpdir(), name);
    let owner = Number.NaN;
    try {
      owner = Number(readFileSync(join(dir, "owner.pid"), "utf8"));
    } catch {
      continue;
    }
    if (existsSync(`/proc/${owner}`)) continue;
    killLeftovers(dir);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The last `lines` lines of a file. */
function tail(path: string, lines: number): string {
  if (!existsSync(path)) return "(no such file)";
  return readFileSync(path, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
}

/** "ok", "timeout", or the error the promise rejected with. */
async function raced(promise: Promise<unknown>, ms: number): Promise<"ok" | "timeout" | unknown> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise.then(
        () => "ok" as const,
        (error: unknown) => (error instanceof Error ? error.message : error),
      ),
      new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether `promise` resolved within `ms` (its rejection is thrown); the timer never outlives it. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(resolve, Math.max(0, ms), false);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * `count` distinct ports the OS calls free on 127.0.0.1 (held together, so they differ), or `base`,
 * `base + 1`, … after checking they are free (pg_autoctl would retry a taken one for a minute).
 */
async function freePorts(count: number, base?: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  try {
    return await Promise.all(
      servers.map(
        (server, index) =>
          new Promise<number>((resolve, reject) => {
            const wanted = base === undefined ? 0 : base + index;
            server.once("error", (error) =>
              reject(new Error(`port ${wanted} on 127.0.0.1: ${error.message}`)),
            );
            server.listen(wanted, "127.0.0.1", () => resolve((server.address() as { port: number }).port));
          }),
      ),
    );
  } finally {
    await Promise.all(
      servers.map(
        (server) => new Promise((resolve) => (server.listening ? server.close(resolve) : resolve(undefined))),
      ),
    );
  }
}
