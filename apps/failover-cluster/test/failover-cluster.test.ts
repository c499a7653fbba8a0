import postgres from "postgres";
import { afterAll, beforeAll, expect, test } from "vitest";
import { type FailoverCluster, type FailoverNode, startFailoverCluster } from "../src/failover-cluster.js";

// The harness itself (src/failover-cluster.ts): a pg_auto_failover monitor and two nodes come
// up as primary + synchronous standby, a clean stop and a SIGKILL of the primary each fail over to the
// standby within seconds and the old primary comes back as the standby, and cutting the database's
// sessions ends the application's connections without disturbing the pair. It needs Debian's
// postgresql-15-auto-failover; without it beforeAll fails (saying so) rather than skipping.

let cluster: FailoverCluster;

beforeAll(async () => {
  const started = performance.now();
  cluster = await startFailoverCluster();
  console.log(`pg_auto_failover cluster started in ${seconds(performance.now() - started)} s`);
}, 180_000);
afterAll(() => cluster?.close(), 60_000);

const seconds = (ms: number) => (ms / 1000).toFixed(1);

async function inRecovery(node: FailoverNode): Promise<boolean> {
  const sql = postgres(cluster.nodeUrl(node), { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ recovery: boolean }[]>`SELECT pg_is_in_recovery() AS recovery`;
    return row!.recovery;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** Strikes the primary, then checks the standby took over and the old primary came back as standby. */
async function failOver(strike: () => Promise<FailoverNode>, how: string): Promise<void> {
  const before = await cluster.primary();
  const struckAt = Date.now();
  const struck = await strike();
  expect(struck).toEqual(before);
  const { node, writableAt } = await cluster.waitForWritablePrimary(90_000, struck);
  console.log(
    `${how} of ${struck.name}: ${node.name} took a write ${seconds(writableAt - struckAt)} s later`,
  );
  expect(node.name).not.toBe(struck.name);
  expect(await cluster.primary()).toEqual(node);
  expect(await inRecovery(node)).toBe(false);

  const rejoinedFrom = Date.now();
  await cluster.waitForHealthy();
  console.log(`${struck.name} rejoined as the standby ${seconds(Date.now() - rejoinedFrom)} s after that`);
  expect(await cluster.standby()).toEqual(struck);
  expect(await inRecovery(struck)).toBe(true);
}

test("the primary takes writes, the standby is a synchronous hot standby that receives them", async () => {
  const primary = await cluster.primary();
  const standby = await cluster.standby();
  expect(primary.name).not.toBe(standby.name);
  expect((await cluster.waitForWritablePrimary(10_000)).node).toEqual(primary);
  expect(await inRecovery(primary)).toBe(false);
  expect(await inRecovery(standby)).toBe(true);

  // Through the multi-host URL, the write lands on the primary; the standby then has the row.
  const app = postgres(cluster.url(), { max: 1, onnotice: () => {} });
  const onStandby = postgres(cluster.nodeUrl(standby), { max: 1, onnotice: () => {} });
  try {
    await app`CREATE TABLE harness_check (id int PRIMARY KEY)`;
    await app`INSERT INTO harness_check VALUES (1)`;
    const [replication] = await app<{ sync_state: string }[]>`SELECT sync_state FROM pg_stat_replication`;
    // pg_auto_failover's synchronous_standby_names is 'ANY 1 (pgautofailover_standby_N)': quorum commit.
    expect(replication?.sync_state).toBe("quorum");
    // Synchronous commit waits for the standby's flush, not its replay: poll a moment for the row.
    const deadline = Date.now() + 10_000;
    let rows = 0;
    while (rows === 0 && Date.now() < deadline) {
      rows = (await onStandby`SELECT 1 FROM harness_check WHERE id = 1`).length;
      if (rows === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(rows).toBe(1);
  } finally {
    await app.end({ timeout: 1 });
    await onStandby.end({ timeout: 1 });
  }
}, 60_000);

test("a clean stop of the primary fails over to the standby; the old primary rejoins as standby", async () => {
  await failOver(() => cluster.stopPrimary(), "clean stop");
}, 240_000);

test("SIGKILL of the primary (Postgres and its keeper) fails over the same way", async () => {
  await failOver(() => cluster.killPrimary(), "SIGKILL");
}, 240_000);

test("cutSessions ends the application's sessions on both nodes; the pair stays healthy", async () => {
  const standby = await cluster.standby();
  const app = postgres(cluster.url(), { max: 1, onnotice: () => {} });
  const reader = postgres(cluster.nodeUrl(standby), { max: 1, onnotice: () => {} });
  try {
    const [before] = await app<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
    await reader`SELECT 1`;
    // At least these two (a session that another test just ended may still be on its way out).
    expect(await cluster.cutSessions("postel")).toBeGreaterThanOrEqual(2);

    // The next query on that connection either fails with the termination or runs on a new session.
    const after = await app<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`.then(
      ([row]) => row!.pid,
      (error: unknown) => error as Error & { code?: string },
    );
    if (typeof after === "number") expect(after).not.toBe(before!.pid);
    else
      expect(after.code ?? after.message).toMatch(
        /57P01|CONNECTION_CLOSED|CONNECTION_ENDED|ECONNRESET|terminat/,
      );
    // Either way the pool then works again.
    expect(await app`SELECT 1 AS one`).toEqual([{ one: 1 }]);

    // Replication and the keepers were left alone: no failover, the same pair, still healthy.
    await cluster.waitForHealthy(30_000);
    expect(await cluster.standby()).toEqual(standby);
    const [replication] = await app<{ sync_state: string }[]>`SELECT sync_state FROM pg_stat_replication`;
    expect(replication?.sync_state).toBe("quorum");
  } finally {
    await app.end({ timeout: 1 });
    await reader.end({ timeout: 1 });
  }
}, 60_000);
