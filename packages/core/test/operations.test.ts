import { describe, expect, test } from "vitest";
import { ExponentialBackoff } from "../src/backoff.js";
import { InvalidInputError } from "../src/errors.js";
import { messageIdBound } from "../src/ids.js";
import { SEARCH_WINDOW } from "../src/outbound/messages.js";
import { STATS_COUNT_CAP } from "../src/outbound/stats.js";
import type { MessageQuery } from "../src/storage/storage.js";
import { harness } from "./support/harness.js";

/** `code` of what `fn` threw (fails the test when it did not throw an InvalidInputError). */
async function codeOf(fn: () => Promise<unknown>): Promise<string> {
  const error = await fn().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidInputError);
  return (error as InvalidInputError).code;
}

describe("pages", () => {
  test("messages.list pages newest first with opaque cursors until nextCursor is null", async () => {
    const h = await harness();
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) {
      sent.push((await h.postel.outbound.send({ type: "order.created", data: { i } })).id);
      h.clock.advance(1);
    }
    const first = await h.postel.outbound.messages.list({ limit: 2 });
    expect(first.items.map((m) => m.id)).toEqual([sent[4], sent[3]]);
    expect(first.nextCursor).toEqual(expect.any(String));
    expect(first.nextCursor).not.toContain(sent[3]); // opaque, not the bare id
    const second = await h.postel.outbound.messages.list({ limit: 2, cursor: first.nextCursor! });
    expect(second.items.map((m) => m.id)).toEqual([sent[2], sent[1]]);
    const third = await h.postel.outbound.messages.list({ limit: 2, cursor: second.nextCursor! });
    expect(third).toEqual({ items: [expect.objectContaining({ id: sent[0] })], nextCursor: null });
  });

  test("messages.list with `until` lists every message created before it, newest first, across pages", async () => {
    const h = await harness();
    const start = h.clock.now();
    const send = async (at: number) => {
      h.clock.set(start + at);
      return (await h.postel.outbound.send({ type: "order.created", data: { at } })).id;
    };
    const early = [await send(0), await send(60_000), await send(120_000)];
    const late = await send(10 * 60_000);
    // The clock stepped back 30 s: this message's id carries the later time, its createdAt the earlier.
    const stepped = await send(10 * 60_000 - 30_000);
    const until = start + 10 * 60_000 - 1;
    const listed: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await h.postel.outbound.messages.list({ until, limit: 2, cursor });
      listed.push(...page.items.map((m) => m.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(listed).toEqual([stepped, early[2], early[1], early[0]]);
    expect(listed).not.toContain(late);
  });

  test("a type few messages carry: each page examines one window, short pages carry a cursor, none is missed", async () => {
    const h = await harness();
    const send = (type: string, n: number) =>
      h.postel.outbound.sendBatch(Array.from({ length: n }, (_, i) => ({ type, data: { i } })));
    const rare = (await send("account.deleted", 2)).map((r) => r.id);
    h.clock.advance(1);
    await send("order.created", SEARCH_WINDOW);
    await send("order.created", SEARCH_WINDOW / 2);
    const examined: number[] = [];
    const window = h.storage.operations!.messageWindow!.bind(h.storage.operations);
    h.storage.operations!.messageWindow = async (after, size) => {
      examined.push(size);
      return window(after, size);
    };
    const pages: { items: string[]; more: boolean }[] = [];
    let cursor: string | undefined;
    do {
      const page = await h.postel.outbound.messages.list({ type: "account.deleted", limit: 10, cursor });
      pages.push({ items: page.items.map((m) => m.id), more: page.nextCursor !== null });
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    // The newest 10,000 hold none of them: a short (empty) page says where to go on; the next window
    // reaches the oldest messages, finds both, and is the last.
    expect(pages).toEqual([
      { items: [], more: true },
      { items: [rare[1], rare[0]], more: false },
    ]);
    expect(examined).toEqual([SEARCH_WINDOW, SEARCH_WINDOW]);
  });

  test("by tenant alone, on a storage with a tenant index, pages are full and no window is searched", async () => {
    const h = await harness();
    const send = (n: number, tenantId?: string) =>
      h.postel.outbound.sendBatch(
        Array.from({ length: n }, (_, i) => ({
          type: "order.created",
          data: { i },
          ...(tenantId ? { tenantId } : {}),
        })),
      );
    const theirs = (await send(3, "acme")).map((r) => r.id);
    h.clock.advance(1);
    await send(SEARCH_WINDOW, "globex");
    await send(10, "globex");
    const window = h.storage.operations!.messageWindow!.bind(h.storage.operations);
    let windows = 0;
    h.storage.operations!.messageWindow = async (after, size) => {
      windows++;
      return window(after, size);
    };
    const page = await h.postel.outbound.messages.list({ tenantId: "acme", limit: 10 });
    expect(page).toEqual({
      items: theirs.reverse().map((id) => expect.objectContaining({ id })),
      nextCursor: null,
    });
    expect(windows).toBe(0);
    // With a type as well, the tenant index does not hold the answer: windows again.
    await h.postel.outbound.messages.list({ tenantId: "acme", type: "order.created", limit: 10 });
    expect(windows).toBe(1);
  });

  test("a search by type stops at `since`: the window that reaches below it ends the listing", async () => {
    const h = await harness();
    const send = (n: number) =>
      h.postel.outbound.sendBatch(
        Array.from({ length: n }, (_, i) => ({ type: "order.created", data: { i } })),
      );
    await send(SEARCH_WINDOW);
    h.clock.advance("1h");
    const since = h.clock.now();
    await send(SEARCH_WINDOW);
    const first = await h.postel.outbound.messages.list({ type: "account.deleted", since });
    expect(first.items).toEqual([]);
    expect(first.nextCursor).not.toBeNull(); // the newest window is all after `since`: go on
    const second = await h.postel.outbound.messages.list({
      type: "account.deleted",
      since,
      cursor: first.nextCursor!,
    });
    expect(second).toEqual({ items: [], nextCursor: null }); // this window went below `since`: the end
  });

  test("a time range stops the storage's walk at the ids of `since`: an empty range reads no older message", async () => {
    const h = await harness();
    const old = await h.postel.outbound.send({ type: "order.created", data: {} });
    h.clock.advance("1d");
    const since = h.clock.now();
    h.clock.advance("1h");
    const recent = await h.postel.outbound.send({ type: "order.created", data: {} });
    const queries: MessageQuery[] = [];
    const list = h.storage.operations!.listMessages.bind(h.storage.operations);
    h.storage.operations!.listMessages = async (query) => {
      queries.push(query);
      return list(query);
    };
    // Nothing was sent in the hour after `since`; the message of the day before lies below the bound.
    expect(await h.postel.outbound.messages.list({ since, until: since + 3_600_000 })).toEqual({
      items: [],
      nextCursor: null,
    });
    expect(queries.at(-1)?.from).toBe(messageIdBound(since - 60_000));
    expect(old.id < queries.at(-1)!.from!).toBe(true);
    const page = await h.postel.outbound.messages.list({ since });
    expect(page.items.map((m) => m.id)).toEqual([recent.id]);
    // With a type, the search window's low end and the bound of `since`: the higher of the two.
    await h.postel.outbound.messages.list({ type: "order.created", since });
    expect(queries.at(-1)?.from).toBe(messageIdBound(since - 60_000));
  });

  test("a page that ends exactly at the last row says there is no next page", async () => {
    const h = await harness();
    for (let i = 0; i < 2; i++) await h.postel.outbound.endpoints.create({ url: h.receiver.url(`/${i}`) });
    expect((await h.postel.outbound.endpoints.list({ limit: 2 })).nextCursor).toBeNull();
    expect(await h.postel.outbound.messages.list()).toEqual({ items: [], nextCursor: null });
  });

  test("endpoints.list pages oldest first and keeps its filters across pages", async () => {
    const h = await harness();
    const created = [];
    for (let i = 0; i < 5; i++) {
      created.push(
        await h.postel.outbound.endpoints.create({ url: h.receiver.url(`/${i}`), tenantId: `t${i % 2}` }),
      );
    }
    const first = await h.postel.outbound.endpoints.list({ tenantId: "t0", limit: 2 });
    const second = await h.postel.outbound.endpoints.list({
      tenantId: "t0",
      limit: 2,
      cursor: first.nextCursor!,
    });
    expect([...first.items, ...second.items].map((e) => e.id)).toEqual(
      [created[0], created[2], created[4]].map((e) => e!.id),
    );
    expect(second.nextCursor).toBeNull();
  });

  test.each([
    ["a limit of 0", { limit: 0 }],
    ["a limit over 1000", { limit: 1_001 }],
    ["a fractional limit", { limit: 1.5 }],
    ["a limit given as text", { limit: "10" }],
    ["an unknown status", { status: "done" }],
    ["an invalid since", { since: new Date("nope") }],
    ["the old `before` cursor option", { before: "msg_1" }],
    ["a type that is not text", { type: 42 }],
  ])("messages.list refuses %s with INVALID_ARGUMENT, naming the field", async (_name, options) => {
    const h = await harness();
    const list = () => h.postel.outbound.messages.list(options as never);
    expect(await codeOf(list)).toBe("INVALID_ARGUMENT");
    const field = Object.keys(options)[0]!;
    await expect(list()).rejects.toThrow(new RegExp(`- ${field}: `));
  });

  test("the old `after` option of endpoints.list is refused with the way to page now", async () => {
    const h = await harness();
    await expect(h.postel.outbound.endpoints.list({ after: "ep_1" } as never)).rejects.toThrow(
      /after: unknown option; lists page with `cursor` now/,
    );
  });

  test.each([
    ["garbage", "not a cursor!"],
    ["an empty string", ""],
    ["base64url of something else", Buffer.from('{"id":"msg_1"}').toString("base64url")],
    ["a cursor of another list", Buffer.from('["endpoints","ep_1"]').toString("base64url")],
    ["a cursor with padding added", `${Buffer.from('["messages","msg_1"]').toString("base64url")}==`],
    ["a number", 42],
  ])("messages.list refuses %s as cursor with INVALID_CURSOR", async (_name, cursor) => {
    const h = await harness();
    const code = await codeOf(() => h.postel.outbound.messages.list({ cursor: cursor as string }));
    expect(code).toBe(typeof cursor === "string" ? "INVALID_CURSOR" : "INVALID_ARGUMENT");
  });

  test("a cursor of endpoints.list is refused by deadLetters.list", async () => {
    const h = await harness();
    for (let i = 0; i < 2; i++) await h.postel.outbound.endpoints.create({ url: h.receiver.url(`/${i}`) });
    const { nextCursor } = await h.postel.outbound.endpoints.list({ limit: 1 });
    expect(await codeOf(() => h.postel.outbound.deadLetters.list({ cursor: nextCursor! }))).toBe(
      "INVALID_CURSOR",
    );
  });
});

describe("deadLetters.list", () => {
  test("lists dead letters with their message's type and tenant, per endpoint and time range", async () => {
    const h = await harness({ retryPolicy: ExponentialBackoff({ maxAttempts: 0 }) });
    h.receiver.script("/down", 500);
    const down = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/down"), tenantId: "acme" });
    const up = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/up"), tenantId: "acme" });
    const sentAt = h.clock.now();
    const { id } = await h.postel.outbound.send({ type: "invoice.paid", data: {}, tenantId: "acme" });
    h.clock.advance("1m");
    await h.postel.drain();
    const page = await h.postel.outbound.deadLetters.list();
    expect(page).toEqual({
      items: [
        {
          status: "dead-lettered",
          deliveryId: expect.any(String),
          messageId: id,
          endpointId: down.id,
          webhookId: id,
          type: "invoice.paid",
          tenantId: "acme",
          attemptsMade: 1,
          lastError: "HTTP 500",
          createdAt: sentAt,
          deadLetteredAt: h.clock.now(),
        },
      ],
      nextCursor: null,
    });
    expect((await h.postel.outbound.deadLetters.list({ endpointId: up.id })).items).toEqual([]);
    const dlAt = h.clock.now();
    expect((await h.postel.outbound.deadLetters.list({ since: new Date(dlAt + 1) })).items).toEqual([]);
    expect((await h.postel.outbound.deadLetters.list({ since: dlAt, until: dlAt + 1 })).items).toHaveLength(
      1,
    );
  });
});

describe("failed.list", () => {
  test("a 410 is a permanent failure: listed by failed.list (not deadLetters.list), counted by stats(), replayable", async () => {
    const h = await harness();
    h.receiver.script("/gone", 410);
    const gone = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/gone") });
    const { id } = await h.postel.outbound.send({ type: "invoice.paid", data: {} });
    await h.postel.drain();
    const page = await h.postel.outbound.failed.list();
    expect(page.items).toEqual([
      expect.objectContaining({
        status: "failed",
        messageId: id,
        endpointId: gone.id,
        lastError: "HTTP 410",
      }),
    ]);
    expect((await h.postel.outbound.deadLetters.list()).items).toEqual([]);
    const stats = await h.postel.outbound.stats();
    expect(stats.failed).toBe(1);
    expect(stats.deadLetters).toBe(0);
    expect(stats.endpoints[0]).toMatchObject({ id: gone.id, failed: 1, deadLetters: 0 });

    // A cursor of one list is refused by the other.
    for (let i = 0; i < 2; i++) await h.postel.outbound.send({ type: "invoice.paid", data: { i } });
    await h.postel.drain();
    const { nextCursor } = await h.postel.outbound.failed.list({ limit: 1 });
    expect(await codeOf(() => h.postel.outbound.deadLetters.list({ cursor: nextCursor! }))).toBe(
      "INVALID_CURSOR",
    );

    h.receiver.script("/gone", 200);
    const replayed = await h.postel.outbound.replay({ messageId: id }, { status: ["failed"] });
    expect(replayed.map((r) => r.endpointId)).toEqual([gone.id]);
    await h.postel.drain();
    expect((await h.postel.outbound.failed.list()).items.map((d) => d.messageId)).not.toContain(id);
    expect((await h.postel.outbound.stats()).failed).toBe(2);
  });
});

describe("stats", () => {
  test("reports the backlog, dead letters and per-endpoint failure rates over the window", async () => {
    const h = await harness({
      retryPolicy: ExponentialBackoff({ maxAttempts: 1, jitter: 0, schedule: ["1h"] }),
    });
    h.receiver.script("/down", 500);
    const down = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/down") });
    const up = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/up"), description: "fine" });
    await h.postel.outbound.send({ type: "order.created", data: {} });
    await h.postel.drain();
    await h.postel.outbound.send({ type: "order.created", data: {} }); // not fanned out yet

    const stats = await h.postel.outbound.stats();
    expect(stats).toMatchObject({
      at: h.clock.now(),
      windowMs: 3_600_000,
      backlog: { due: 0, oldestDueAt: null, inFlight: 0, scheduled: 1, held: 0, unfanned: 1 },
      deadLetters: 0,
      attempts: { total: 2, failures: 1, failureRate: 0.5 },
    });
    expect(stats.endpoints).toEqual([
      expect.objectContaining({ id: down.id, scheduled: 1, attempts: 1, failures: 1, failureRate: 1 }),
      expect.objectContaining({ id: up.id, description: "fine", state: "active", failureRate: 0 }),
    ]);

    // One endpoint's: its line alone, and the backlog and attempts are its own.
    const mine = await h.postel.outbound.stats({ endpointId: up.id });
    expect(mine.endpoints.map((e) => e.id)).toEqual([up.id]);
    expect(mine.backlog).toMatchObject({ scheduled: 0, unfanned: 1 });
    expect(mine.attempts).toEqual({ total: 1, failures: 0, failureRate: 0 });

    h.clock.advance("2h");
    const later = await h.postel.outbound.stats({ window: "30m" });
    expect(later.backlog).toMatchObject({ due: 1, oldestDueAt: later.at - 3_600_000 });
    expect(later.attempts).toEqual({ total: 0, failures: 0, failureRate: null });
    expect(later.endpoints.map((e) => e.failureRate)).toEqual([null, null]);
  });

  test("says a count stopped at the cap, a deleted endpoint's dead letters included", async () => {
    const h = await harness({
      retryPolicy: ExponentialBackoff({ maxAttempts: 0 }),
      circuitBreaker: false,
      autoDisable: false,
    });
    h.receiver.script("/down", 500);
    const down = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/down") });
    await h.postel.outbound.sendBatch(
      Array.from({ length: STATS_COUNT_CAP }, (_, i) => ({ type: "order.created", data: { i } })),
    );
    for (let pass = 0; pass < 100; pass++) {
      if ((await h.postel.outbound.stats({ exact: true })).deadLetters === STATS_COUNT_CAP) break;
      await h.postel.drain();
    }
    const listed = await h.postel.outbound.stats();
    expect(listed).toMatchObject({ deadLetters: STATS_COUNT_CAP, countCap: STATS_COUNT_CAP, capped: true });

    await h.postel.outbound.endpoints.delete(down.id);
    const unlisted = await h.postel.outbound.stats();
    expect(unlisted.endpoints).toEqual([]);
    expect(unlisted).toMatchObject({ deadLetters: STATS_COUNT_CAP, capped: true });
    expect(await h.postel.outbound.stats({ exact: true })).toMatchObject({ countCap: null, capped: false });
  });

  test.each([["0"], ["-5m"], ["soon"], [0]])(
    "refuses a window of %j with INVALID_ARGUMENT",
    async (window) => {
      const h = await harness();
      expect(await codeOf(() => h.postel.outbound.stats({ window: window as never }))).toBe(
        "INVALID_ARGUMENT",
      );
    },
  );
});

describe("attempts.recent", () => {
  test("returns every instance's attempts since a time, oldest first", async () => {
    const h = await harness({
      retryPolicy: ExponentialBackoff({ maxAttempts: 1, jitter: 0, schedule: ["1m"] }),
    });
    h.receiver.script("/flaky", (index) => (index === 0 ? 500 : 200));
    await h.postel.outbound.endpoints.create({ url: h.receiver.url("/flaky") });
    const { id } = await h.postel.outbound.send({ type: "order.created", data: {} });
    await h.postel.drain();
    const retryAt = h.clock.now() + 60_000;
    h.clock.advance("1m");
    await h.postel.drain();
    const recent = await h.postel.outbound.attempts.recent({ since: 0 });
    expect(recent.map((a) => [a.messageId, a.attemptNumber, a.outcome])).toEqual([
      [id, 1, "retryable"],
      [id, 2, "success"],
    ]);
    expect(await h.postel.outbound.attempts.recent({ since: new Date(retryAt), limit: 1 })).toEqual([
      recent[1],
    ]);
  });

  test("refuses a missing since and a bad limit with INVALID_ARGUMENT", async () => {
    const h = await harness();
    expect(await codeOf(() => h.postel.outbound.attempts.recent({} as never))).toBe("INVALID_ARGUMENT");
    expect(await codeOf(() => h.postel.outbound.attempts.recent({ since: 0, limit: 5_000 }))).toBe(
      "INVALID_ARGUMENT",
    );
  });
});

describe("replay onProgress", () => {
  test("reports progress chunk by chunk up to the total", async () => {
    const h = await harness({
      retryPolicy: ExponentialBackoff({ maxAttempts: 0 }),
      circuitBreaker: false,
      autoDisable: false,
    });
    h.receiver.script("/down", 500);
    const endpoint = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/down") });
    const events = Array.from({ length: 1_500 }, (_, i) => ({ type: "order.created", data: { i } }));
    await h.postel.outbound.sendBatch(events);
    for (let pass = 0; pass < 50; pass++) {
      await h.postel.drain();
      if ((await h.postel.outbound.stats()).deadLetters === 1_500) break;
    }
    const progress: { replayed: number; total: number }[] = [];
    const replayed = await h.postel.outbound.replay(
      { endpointId: endpoint.id, since: 0 },
      { onProgress: (p) => progress.push(p) },
    );
    expect(replayed).toHaveLength(1_500);
    expect(progress).toEqual([
      { replayed: 1_000, total: 1_500 },
      { replayed: 1_500, total: 1_500 },
    ]);
  });

  test("reports once with a total of 0 when nothing matches, and refuses an onProgress that is not a function", async () => {
    const h = await harness();
    const endpoint = await h.postel.outbound.endpoints.create({ url: h.receiver.url("/x") });
    const progress: unknown[] = [];
    await h.postel.outbound.replay(
      { endpointId: endpoint.id, since: 0 },
      { onProgress: (p) => progress.push(p) },
    );
    expect(progress).toEqual([{ replayed: 0, total: 0 }]);
    expect(
      await codeOf(() =>
        h.postel.outbound.replay({ endpointId: endpoint.id, since: 0 }, { onProgress: "yes" as never }),
      ),
    ).toBe("INVALID_ARGUMENT");
  });
});
