import { countDeliveries } from "./count-deliveries.js";
import { type Client, createClient } from "@libsql/client";
import { ConfigurationError, type DeliveryRecord } from "@postel/core";
import { newEndpoint, newMessage, T0 } from "@postel/core/storage/conformance";
import { afterEach, describe, expect, test } from "vitest";
import { SqliteStorage } from "../src/index.js";
import { openWriter, type Synchronous } from "../src/internal/writer.js";
import { tempDatabase } from "./temp-db.js";

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function fresh(): ReturnType<typeof tempDatabase> {
  const file = tempDatabase();
  cleanups.push(file.remove);
  return file;
}

const message = (id: string) => newMessage({ id, payload: "{}" });
const endpoint = (id: string) => newEndpoint({ id });

/** `count` messages fanned out to one endpoint: `count` deliveries due at T0. */
async function seedDue(storage: SqliteStorage, count: number): Promise<void> {
  await storage.createEndpoint(endpoint("ep_1"));
  for (let i = 0; i < count; i++) await storage.enqueue(message(`msg_${String(i).padStart(3, "0")}`));
  const claimed = await storage.claimFanout({ owner: "seed", now: T0, until: T0 + 1000, limit: count });
  await storage.recordFanout(
    claimed.map(({ message: m, token }) => ({
      messageId: m.id,
      token,
      deliveries: [
        { id: `dlv_${m.id}`, messageId: m.id, endpointId: "ep_1", webhookId: `wh_${m.id}`, createdAt: T0 },
      ],
    })),
    T0,
  );
}

describe("SqliteStorage", () => {
  test("concurrent claimDue calls in one process never throw SQLITE_BUSY nor return a delivery twice", async () => {
    const storage = SqliteStorage({ url: fresh().url });
    cleanups.push(() => storage.close());
    await seedDue(storage, 60);
    const claims = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        storage.claimDue({ owner: `w${i}`, now: T0 + 1, until: T0 + 60_000, limit: 7 }),
      ),
    );
    const ids = claims.flat().map((claimed) => claimed.delivery.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(60);
  });

  test("a write waits for another connection's write transaction, then it and later writes succeed", async () => {
    const file = fresh();
    // A budget well above the 100 ms the lock is held, but below the time libsql takes to free a
    // connection poisoned by a busy BEGIN (garbage collection): retrying there would run out of time.
    const storage = SqliteStorage({ url: file.url }, { busyTimeoutMs: 600 });
    cleanups.push(() => storage.close());
    await storage.migrate();
    const other = createClient({ url: file.url });
    cleanups.push(() => other.close());
    const tx = await other.transaction("write");
    await tx.execute("INSERT INTO postel_meta (key, value) VALUES ('held', 'by another connection')");
    const waiting = storage.enqueue(message("msg_waiting"));
    await new Promise((resolve) => setTimeout(resolve, 100)); // the lock is really held meanwhile
    await tx.commit();
    expect(await waiting).toEqual({ id: "msg_waiting", reused: false });
    // The connection that met the lock is not left unusable (libsql does not reset a busy statement).
    expect(await storage.enqueue(message("msg_after"))).toEqual({ id: "msg_after", reused: false });
    expect(await storage.operations.listMessages({ limit: 10 })).toHaveLength(2);
  });

  test("gives up with SQLITE_BUSY once busyTimeoutMs has passed", async () => {
    const file = fresh();
    const storage = SqliteStorage({ url: file.url }, { busyTimeoutMs: 100 });
    cleanups.push(() => storage.close());
    await storage.migrate();
    const other = createClient({ url: file.url });
    cleanups.push(() => other.close());
    const tx = await other.transaction("write");
    cleanups.push(() => tx.close());
    await expect(storage.enqueue(message("msg_blocked"))).rejects.toMatchObject({ code: "SQLITE_BUSY" });
  });

  test("close() closes a client it opened but never a client it was given", async () => {
    const file = fresh();
    const owned = SqliteStorage({ url: file.path }); // a bare path works too
    await owned.migrate();
    await owned.close();
    expect(owned.client.closed).toBe(true);

    const client = createClient({ url: file.url });
    cleanups.push(() => client.close());
    const shared = SqliteStorage({ client });
    await shared.enqueue(message("msg_shared"));
    await shared.close();
    expect(client.closed).toBe(false);
    expect((await client.execute("SELECT id FROM postel_messages")).rows).toHaveLength(1);
  });

  test("works on a shared client whatever its intMode", async () => {
    const client = createClient({ url: fresh().url, intMode: "bigint" });
    cleanups.push(() => client.close());
    const storage = SqliteStorage({ client });
    await seedDue(storage, 2);
    const [claimed] = await storage.claimDue({ owner: "w", now: T0 + 1, until: T0 + 60_000, limit: 1 });
    expect(claimed?.delivery.nextAttemptAt).toBe(T0 + 60_000);
    expect(claimed?.message.createdAt).toBe(T0);
    expect(await storage.endpointsRevision()).toBe(1);
  });

  test("outcomes recorded twice (the first response lost) are lease lost the second time and counted once", async () => {
    const storage = SqliteStorage({ url: fresh().url });
    cleanups.push(() => storage.close());
    await seedDue(storage, 1);
    await storage.enqueue(message("msg_direct"));
    const [fanout] = await storage.claimFanout({ owner: "w", now: T0, until: T0 + 1000, limit: 1 });
    const [due] = await storage.claimDue({ owner: "w", now: T0, until: T0 + 1000, limit: 1 });
    const direct = { id: "dlv_direct", messageId: "msg_direct", endpointId: "ep_1", webhookId: "msg_direct" };
    const succeeded = (id: string, delivery: Pick<DeliveryRecord, "id" | "messageId" | "webhookId">) => ({
      deliveryId: delivery.id,
      transition: { kind: "succeeded" as const },
      attempt: {
        id,
        deliveryId: delivery.id,
        messageId: delivery.messageId,
        endpointId: "ep_1",
        webhookId: delivery.webhookId,
        attemptNumber: 1,
        startedAt: T0,
        latencyMs: 5,
        outcome: "success" as const,
        statusCode: 200,
        errorCode: null,
        error: null,
        responseSnippet: null,
      },
    });
    const outcomes = [
      { ...succeeded("att_1", due!.delivery), leaseToken: due!.leaseToken },
      { ...succeeded("att_2", direct), leaseToken: fanout!.token, newDelivery: { ...direct, createdAt: T0 } },
    ];
    const ids = [due!.delivery.id, direct.id];
    expect(await storage.recordOutcomes(outcomes, T0 + 1)).toEqual({ recorded: ids, leaseLost: [] });
    expect(await storage.recordOutcomes(outcomes, T0 + 2)).toEqual({ recorded: [], leaseLost: ids });
    expect(await storage.endpointHealth("ep_1", 0)).toEqual({ attempts: 2, failures: 0 });
    expect(await countDeliveries(storage.client)).toEqual({ succeeded: 2 });
  });

  test("rejects invalid options with one ConfigurationError naming each field", () => {
    const error = (() => {
      try {
        // @ts-expect-error -- "off" is not a setting Postel offers
        SqliteStorage({ url: "" }, { busyTimeoutMs: -1, synchronous: "off" });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).issues.map((issue) => issue.path)).toEqual([
      "synchronous",
      "busyTimeoutMs",
      "url",
    ]);
  });
});

describe("Postel's write connection", () => {
  /** `PRAGMA synchronous` (1 = NORMAL, 2 = FULL) on the writer's own connection and on the client's. */
  async function synchronousSeenBy(options: { synchronous?: Synchronous }) {
    const file = fresh();
    const client = createClient({ url: file.url });
    const writer = await openWriter(client, 100, options);
    cleanups.push(
      () => client.close(),
      () => writer.close(),
    );
    const read = async (on: Pick<Client, "execute">) =>
      Number((await on.execute("PRAGMA synchronous")).rows[0]?.[0]);
    return { writer: await read(writer), client: await read(client) };
  }

  test("commits with synchronous=FULL unless told otherwise", async () => {
    expect((await synchronousSeenBy({})).writer).toBe(2);
    expect((await synchronousSeenBy({ synchronous: "full" })).writer).toBe(2);
  });

  test('sets synchronous=NORMAL on its own connection only, with { synchronous: "normal" }', async () => {
    expect(await synchronousSeenBy({ synchronous: "normal" })).toEqual({ writer: 1, client: 2 });
  });
});
