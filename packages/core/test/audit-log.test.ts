import * as v from "valibot";
import { afterEach, describe, expect, test } from "vitest";
import { ManualClock } from "../src/clock.js";
import { AUDIT_ENTRY_LIMITS, type AuditEntryInput } from "../src/outbound/audit-entry-input.js";
import { defineEvents } from "../src/outbound/catalog.js";
import { Postel } from "../src/postel.js";
import { InMemoryStorage } from "../src/storage/in-memory-storage.js";
import type { Storage } from "../src/storage/storage.js";
import { refusal } from "./support/refusal.js";

const DAY = 86_400_000;
const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

/** A Postel on a fresh InMemoryStorage (or `storage`) and a manual clock. */
function setup(storage: Storage<unknown> = InMemoryStorage()) {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const postel = Postel({ clock, outbound: { storage } });
  closing.push(() => postel.close());
  return { postel, clock, storage, auditLog: postel.outbound.auditLog };
}

const entry = (overrides: Partial<AuditEntryInput> = {}): AuditEntryInput => ({
  tenantId: "acme",
  actor: "ada@acme.test",
  action: "endpoint.create",
  source: "portal",
  ...overrides,
});

describe("auditLog.record()", () => {
  test("records an entry with an aud_ id and the clock's time; list returns it with every field", async () => {
    const { auditLog, clock } = setup();
    const result = await auditLog.record(
      entry({ target: "ep_1", detail: { url: "https://example.com/hook", types: 2, enabled: true } }),
    );
    expect(result).toEqual({ id: expect.stringMatching(/^aud_[0-9a-z]{26}$/), recorded: true });
    expect((await auditLog.list()).items).toEqual([
      {
        id: result.id,
        at: clock.now(),
        tenantId: "acme",
        actor: "ada@acme.test",
        action: "endpoint.create",
        target: "ep_1",
        source: "portal",
        detail: { url: "https://example.com/hook", types: 2, enabled: true },
        key: null,
      },
    ]);
  });

  test("a key already recorded writes nothing and answers recorded: false (a one-time nonce)", async () => {
    const { auditLog } = setup();
    const first = await auditLog.record(entry({ action: "link.exchange", key: "nonce-1" }));
    const again = await auditLog.record(entry({ action: "link.exchange", key: "nonce-1" }));
    expect(first.recorded).toBe(true);
    expect(again.recorded).toBe(false);
    expect((await auditLog.list()).items.map((e) => e.id)).toEqual([first.id]);
  });

  const long = (n: number) => "x".repeat(n);
  const tooManyKeys = Object.fromEntries(
    Array.from({ length: AUDIT_ENTRY_LIMITS.detailKeys + 1 }, (_, i) => [`k${i}`, i]),
  );
  const bad: [string, unknown, string][] = [
    ["no actor", { action: "a", source: "portal" }, "actor"],
    ["an empty actor", entry({ actor: "" }), "actor"],
    ["an actor over 200 characters", entry({ actor: long(201) }), "actor"],
    ["an actor with NUL", entry({ actor: "ada\u0000" }), "actor"],
    ["an actor with a lone surrogate", entry({ actor: "ada\ud800" }), "actor"],
    ["an actor that is a number", entry({ actor: 7 as unknown as string }), "actor"],
    ["an upper-case action", entry({ action: "Endpoint.Create" }), "action"],
    ["an action starting with a digit", entry({ action: "1endpoint" }), "action"],
    ["an action with a space", entry({ action: "endpoint create" }), "action"],
    ["an action over 64 characters", entry({ action: `a${long(64)}` }), "action"],
    ["no source", { actor: "ada", action: "a" }, "source"],
    ["a source with a slash", entry({ source: "app/portal" }), "source"],
    ["an empty target", entry({ target: "" }), "target"],
    ["a target over 200 characters", entry({ target: long(201) }), "target"],
    ["a target with NUL", entry({ target: "ep\u0000" }), "target"],
    ["an empty tenantId", entry({ tenantId: "" }), "tenantId"],
    ["a tenantId with a lone surrogate", entry({ tenantId: "\udc00acme" }), "tenantId"],
    ["an empty key", entry({ key: "" }), "key"],
    ["a key over 200 characters", entry({ key: long(201) }), "key"],
    ["a detail that is an array", entry({ detail: [1] as unknown as Record<string, number> }), "detail"],
    ["a detail that is a string", entry({ detail: "x" as unknown as Record<string, number> }), "detail"],
    ["a detail that is a Date", entry({ detail: new Date() as unknown as Record<string, number> }), "detail"],
    ["a nested detail value", entry({ detail: { nested: { a: 1 } as unknown as number } }), "detail.nested"],
    ["a detail value that is an array", entry({ detail: { list: [1] as unknown as number } }), "detail.list"],
    ["a NaN detail value", entry({ detail: { n: Number.NaN } }), "detail.n"],
    ["an Infinity detail value", entry({ detail: { n: Number.POSITIVE_INFINITY } }), "detail.n"],
    ["a detail string with NUL", entry({ detail: { s: "a\u0000" } }), "detail.s"],
    ["a detail key with a lone surrogate", entry({ detail: { "k\ud800": 1 } }), "detail.k"],
    ["a detail of 33 keys", entry({ detail: tooManyKeys }), "detail"],
    ["a detail over 4 KiB", entry({ detail: { s: long(AUDIT_ENTRY_LIMITS.detailBytes) } }), "detail"],
    ["an unknown field", { ...entry(), at: 5 }, "at"],
    ["null", null, "(entry)"],
    ["an array", [entry()], "(entry)"],
  ];
  test.each(bad)(
    "%s is INVALID_AUDIT_ENTRY naming the field, and nothing is written",
    async (_, input, field) => {
      const { auditLog } = setup();
      const error = await refusal(auditLog.record(input as AuditEntryInput));
      expect(error.code).toBe("INVALID_AUDIT_ENTRY");
      expect(error.message).toContain(`- ${field}`);
      expect((await auditLog.list()).items).toEqual([]);
    },
  );

  test("a refusal lists every bad field at once", async () => {
    const { auditLog } = setup();
    const error = await refusal(auditLog.record({ actor: "", action: "X", source: "portal", target: "" }));
    expect(error.message).toMatch(/- actor: .*\n {2}- action: .*\n {2}- target: /);
  });

  test("the bounds themselves are accepted: 200-character actor, target and key, 32 keys, 4 KiB of detail", async () => {
    const { auditLog } = setup();
    const detail = Object.fromEntries(
      Array.from({ length: AUDIT_ENTRY_LIMITS.detailKeys }, (_, i) => [`k${i}`, i]),
    );
    await auditLog.record(entry({ actor: long(200), target: long(200), key: long(200), detail }));
    // {"s":"…"} is 8 bytes of JSON around the string.
    await auditLog.record(
      entry({ action: `a${long(63)}`, detail: { s: long(AUDIT_ENTRY_LIMITS.detailBytes - 8) } }),
    );
    expect((await auditLog.list()).items).toHaveLength(2);
  });
});

describe("auditLog.list(), count() and prune()", () => {
  test("list pages newest first with opaque cursors, filtered by tenant, action and time", async () => {
    const { auditLog, clock } = setup();
    const start = clock.now();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(
        (await auditLog.record(entry({ action: i % 2 === 0 ? "endpoint.create" : "endpoint.delete" }))).id,
      );
      await auditLog.record(entry({ tenantId: "other" }));
      clock.advance(1_000);
    }
    const first = await auditLog.list({ tenantId: "acme", limit: 2 });
    expect(first.items.map((e) => e.id)).toEqual([ids[4], ids[3]]);
    const second = await auditLog.list({ tenantId: "acme", limit: 2, cursor: first.nextCursor! });
    const third = await auditLog.list({ tenantId: "acme", limit: 2, cursor: second.nextCursor! });
    expect([...second.items, ...third.items].map((e) => e.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(third.nextCursor).toBeNull();
    const creates = await auditLog.list({ tenantId: "acme", action: "endpoint.create" });
    expect(creates.items.map((e) => e.id)).toEqual([ids[4], ids[2], ids[0]]);
    const window = await auditLog.list({
      tenantId: "acme",
      since: new Date(start + 1_000),
      until: start + 3_000,
    });
    expect(window.items.map((e) => e.id)).toEqual([ids[2], ids[1]]);
  });

  test("list refuses bad options and another list's cursor", async () => {
    const { auditLog, postel } = setup();
    await postel.outbound.send({ type: "order.created", data: {} });
    await postel.outbound.send({ type: "order.created", data: {} });
    const foreign = (await postel.outbound.messages.list({ limit: 1 })).nextCursor!;
    expect((await refusal(auditLog.list({ limit: 0 }))).code).toBe("INVALID_ARGUMENT");
    expect((await refusal(auditLog.list({ since: "yesterday" as unknown as number }))).code).toBe(
      "INVALID_ARGUMENT",
    );
    expect((await refusal(auditLog.list({ cursor: foreign }))).code).toBe("INVALID_CURSOR");
  });

  test("count counts a tenant's entries of the given actions since a time, for rate limits", async () => {
    const { auditLog, clock } = setup();
    const start = clock.now();
    await auditLog.record(entry({ action: "link.exchange" }));
    clock.advance(60_000);
    await auditLog.record(entry({ action: "link.exchange" }));
    await auditLog.record(entry({ action: "endpoint.create" }));
    await auditLog.record(entry({ tenantId: null, action: "link.exchange" }));
    const count = (tenantId: string | null, actions: string[], since: number | Date) =>
      auditLog.count({ tenantId, actions, since });
    expect(await count("acme", ["link.exchange"], start)).toBe(2);
    expect(await count("acme", ["link.exchange"], new Date(start + 1))).toBe(1);
    expect(await count("acme", ["link.exchange", "endpoint.create"], start)).toBe(3);
    expect(await count(null, ["link.exchange"], start)).toBe(1);
    for (const bad of [
      { tenantId: "acme", actions: [], since: start },
      { tenantId: "acme", actions: ["Link"], since: start },
      { actions: ["link.exchange"], since: start },
      { tenantId: "acme", actions: ["link.exchange"] },
    ]) {
      const error = await refusal(auditLog.count(bad as never));
      expect(error.code).toBe("INVALID_ARGUMENT");
    }
  });

  test("prune deletes every entry older than olderThan, batch after batch, and keeps the rest", async () => {
    const { auditLog, clock, storage } = setup();
    const keep: string[] = [];
    for (let i = 0; i < 1_203; i++)
      await storage.auditLog!.appendAuditEntry(oldEntry(i, clock.now() - 400 * DAY));
    keep.push((await auditLog.record(entry())).id);
    clock.advance(366 * DAY);
    keep.push((await auditLog.record(entry())).id);
    expect(await auditLog.prune({ olderThan: "365d" })).toEqual({ entries: 1_204 });
    expect((await auditLog.list()).items.map((e) => e.id)).toEqual([keep[1]]);
    expect(await auditLog.prune({ olderThan: "365d" })).toEqual({ entries: 0 });
    const error = await refusal(auditLog.prune({ olderThan: "a year" as never }));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.message).toContain("olderThan");
  });

  test("outbound.prune() and retention leave the audit log alone", async () => {
    const { auditLog, clock, postel } = setup();
    await auditLog.record(entry());
    await postel.outbound.send({ type: "order.created", data: {} });
    await postel.drain();
    clock.advance(400 * DAY);
    const pruned = await postel.outbound.prune({ olderThan: "1d" });
    expect(pruned.messages).toBe(1);
    expect((await auditLog.list()).items).toHaveLength(1);
  });
});

describe("without the capability", () => {
  test("every call on a storage without auditLog throws AUDIT_LOG_UNSUPPORTED, naming the storages that have one", async () => {
    const { auditLog: _, ...withoutAuditLog } = InMemoryStorage();
    const { auditLog } = setup({ ...withoutAuditLog, name: "custom" });
    for (const call of [
      () => auditLog.record(entry()),
      () => auditLog.list(),
      () => auditLog.count({ tenantId: null, actions: ["a"], since: 0 }),
      () => auditLog.prune({ olderThan: "1d" }),
    ]) {
      const error = await refusal(call());
      expect(error.code).toBe("AUDIT_LOG_UNSUPPORTED");
      expect(error.message).toContain("custom storage has no audit log");
      expect(error.message).toMatch(/PostgresStorage.*SqliteStorage/);
    }
  });
});

describe("outbound.catalog", () => {
  test("is the catalog Postel was configured with, and null without one", () => {
    const events = defineEvents({
      "order.created": {
        schema: v.object({ id: v.string() }),
        description: "An order was placed.",
        examples: [{ id: "ord_1" }],
      },
    });
    const withCatalog = Postel({ outbound: { storage: InMemoryStorage(), events } });
    closing.push(() => withCatalog.close());
    expect(withCatalog.outbound.catalog).toBe(events);
    expect(setup().postel.outbound.catalog).toBeNull();
  });
});

function oldEntry(i: number, at: number) {
  return {
    id: `aud_old_${String(i).padStart(5, "0")}`,
    at,
    tenantId: null,
    actor: "cron",
    action: "report.run",
    target: null,
    source: "api",
    detail: null,
    key: null,
  };
}
