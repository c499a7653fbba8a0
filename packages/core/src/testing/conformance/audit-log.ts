import { expect } from "vitest";
import type { AuditLogRecord, AuditLogStore, Storage } from "../../storage/storage.js";
import { type ConformanceContext, group } from "./context.js";
import { nextId, T0 } from "./fixtures.js";
import { expectEachOnce, readAllPages } from "./operations.js";

/** An audit entry at `T0` with every optional field empty. */
function newAuditEntry(overrides: Partial<AuditLogRecord> = {}): AuditLogRecord {
  return {
    id: nextId("aud"),
    at: T0,
    tenantId: null,
    actor: "ada@example.com",
    action: "endpoint.create",
    target: null,
    source: "portal",
    detail: null,
    key: null,
    ...overrides,
  };
}

/** Appends each entry in order, expecting each to be written. */
async function appendAll(log: AuditLogStore, entries: AuditLogRecord[]): Promise<AuditLogRecord[]> {
  for (const entry of entries) expect(await log.appendAuditEntry(entry)).toBe(true);
  return entries;
}

const ids = (entries: readonly { id: string }[]) => entries.map((entry) => entry.id);

/** The optional audit log (`Storage.auditLog`): append, keyset listing, counts and pruning. */
export function auditLogTests(context: ConformanceContext): void {
  const log = (): AuditLogStore => context.storage().auditLog!;
  const noAuditLog = (storage: Storage<unknown>) =>
    storage.auditLog === undefined
      ? `the ${storage.name} storage has no auditLog (an optional capability)`
      : undefined;

  group(
    context,
    "audit-log",
    (test) => {
      test("an appended entry is listed as written, its detail round-tripping unicode, numbers, booleans and null", async () => {
        const entry = newAuditEntry({
          tenantId: "tenant-ü",
          actor: "Zoë 🦊 <zoe@example.com>",
          action: "endpoint.update",
          target: "ep_01",
          source: "dashboard",
          detail: {
            url: "https://例え.jp/hook",
            "clé 🔑": "naïve",
            count: 3,
            ratio: -0.25,
            on: false,
            none: null,
          },
          key: "nonce-1",
        });
        expect(await log().appendAuditEntry(entry)).toBe(true);
        expect(await log().listAuditEntries({ limit: 10 })).toEqual([entry]);
      });

      test("listAuditEntries lists newest first by id, at most `limit`, below `after`", async () => {
        const entries = await appendAll(log(), [newAuditEntry(), newAuditEntry(), newAuditEntry()]);
        const newestFirst = ids(entries).reverse();
        expect(ids(await log().listAuditEntries({ limit: 2 }))).toEqual(newestFirst.slice(0, 2));
        expect(ids(await log().listAuditEntries({ limit: 10, after: newestFirst[0] }))).toEqual(
          newestFirst.slice(1),
        );
        expect(await log().listAuditEntries({ limit: 10, after: newestFirst[2] })).toEqual([]);
      });

      test("listAuditEntries pages skip and repeat no entry when entries are appended between pages", async () => {
        const base = nextId("aud");
        const append = (suffix: string, tenantId: string | null = "t1") =>
          log().appendAuditEntry(newAuditEntry({ id: `${base}_${suffix}`, tenantId }));
        for (const suffix of ["b", "d", "f", "h", "j", "l"]) await append(suffix);
        const expected = ["b", "d", "f", "h", "j", "l"].map((s) => `${base}_${s}`);
        for (const tenantId of [undefined, "t1"]) {
          const seen = await readAllPages(
            (after) => log().listAuditEntries({ limit: 2, after, tenantId }),
            (entry) => entry.id,
            // Between pages: newer than everything, beside rows already read, among rows to come.
            async (page) => {
              if (tenantId !== undefined) return;
              if (page === 1) for (const suffix of ["m", "k", "g"]) await append(suffix);
              if (page === 2) await append("e");
            },
          );
          expectEachOnce(seen, expected);
          expect(seen).toEqual([...seen].sort().reverse());
        }
      });

      test("listAuditEntries filters by tenant, by action, and by both", async () => {
        const [a1, b1, none, a2, a3] = await appendAll(log(), [
          newAuditEntry({ tenantId: "a", action: "endpoint.create" }),
          newAuditEntry({ tenantId: "b", action: "endpoint.create" }),
          newAuditEntry({ tenantId: null, action: "endpoint.create" }),
          newAuditEntry({ tenantId: "a", action: "endpoint.delete" }),
          newAuditEntry({ tenantId: "a", action: "endpoint.create" }),
        ]);
        const list = (query: { tenantId?: string; action?: string }) =>
          log()
            .listAuditEntries({ limit: 10, ...query })
            .then(ids);
        expect(await list({ tenantId: "a" })).toEqual(ids([a3!, a2!, a1!]));
        expect(await list({ tenantId: "b" })).toEqual(ids([b1!]));
        expect(await list({ tenantId: "c" })).toEqual([]);
        expect(await list({ action: "endpoint.create" })).toEqual(ids([a3!, none!, b1!, a1!]));
        expect(await list({ tenantId: "a", action: "endpoint.create" })).toEqual(ids([a3!, a1!]));
        expect(await list({ tenantId: "a", action: "endpoint.rotate" })).toEqual([]);
      });

      test("listAuditEntries keeps entries with since <= at < until", async () => {
        const [, atSince, inside, , lastIn] = await appendAll(
          log(),
          [T0 - 1, T0, T0 + 500, T0 + 1_000, T0 + 999].map((at) => newAuditEntry({ at })),
        );
        const list = (query: { since?: number; until?: number }) =>
          log()
            .listAuditEntries({ limit: 10, ...query })
            .then(ids);
        expect(await list({ since: T0, until: T0 + 1_000 })).toEqual(ids([lastIn!, inside!, atSince!]));
        expect(await list({ since: T0 + 1_000 })).toHaveLength(1);
        expect(await list({ until: T0 })).toHaveLength(1);
      });

      test("of 20 concurrent appends with one key exactly one is written; entries without a key never conflict", async () => {
        const racing = Array.from({ length: 20 }, () => newAuditEntry({ key: "link-nonce-42" }));
        const results = await Promise.all(racing.map((entry) => log().appendAuditEntry(entry)));
        expect(results.filter(Boolean)).toHaveLength(1);
        const written = racing[results.indexOf(true)]!;
        expect(await log().listAuditEntries({ limit: 100 })).toEqual([written]);
        expect(await log().appendAuditEntry(newAuditEntry({ key: "link-nonce-42" }))).toBe(false);
        const unkeyed = await Promise.all([0, 1, 2].map(() => log().appendAuditEntry(newAuditEntry())));
        expect(unkeyed).toEqual([true, true, true]);
        expect(await log().listAuditEntries({ limit: 100 })).toHaveLength(4);
      });

      test("appending an id already stored fails and changes nothing", async () => {
        const [entry] = await appendAll(log(), [newAuditEntry({ actor: "first" })]);
        await expect(log().appendAuditEntry({ ...entry!, actor: "second", key: "other" })).rejects.toThrow();
        expect(await log().listAuditEntries({ limit: 10 })).toEqual([entry]);
      });

      test("countAuditEntries counts one tenant's entries of the given actions at or after since", async () => {
        const at = (tenantId: string | null, action: string, when: number) =>
          newAuditEntry({ tenantId, action, at: when });
        await appendAll(log(), [
          at("a", "link.exchange", T0 - 1),
          at("a", "link.exchange", T0),
          at("a", "link.exchange", T0 + 10),
          at("a", "endpoint.create", T0 + 20),
          at("a", "endpoint.delete", T0 + 30),
          at("b", "link.exchange", T0 + 40),
          at(null, "link.exchange", T0 + 50),
        ]);
        const count = (tenantId: string | null, actions: string[], since = T0) =>
          log().countAuditEntries({ tenantId, actions, since });
        expect(await count("a", ["link.exchange"])).toBe(2);
        expect(await count("a", ["link.exchange"], T0 - 1)).toBe(3);
        expect(await count("a", ["link.exchange", "endpoint.create"])).toBe(3);
        expect(await count("b", ["link.exchange"])).toBe(1);
        expect(await count(null, ["link.exchange"])).toBe(1);
        expect(await count("c", ["link.exchange"])).toBe(0);
        expect(await count("a", [])).toBe(0);
        expect(await count("a", ["link.exchange"], T0 + 11)).toBe(0);
      });

      test("pruneAuditEntries deletes at most `limit` entries older than `before`, oldest first, and frees their keys", async () => {
        const old = await appendAll(
          log(),
          [5, 1, 4, 2, 3].map((minutes) =>
            newAuditEntry({ at: T0 - minutes * 60_000, key: `old-${minutes}` }),
          ),
        );
        const kept = await appendAll(log(), [newAuditEntry({ at: T0 }), newAuditEntry({ at: T0 + 1 })]);
        expect(await log().pruneAuditEntries({ before: T0, limit: 3 })).toBe(3);
        // The three oldest went (5, 4 and 3 minutes before T0).
        const left = await log().listAuditEntries({ limit: 100 });
        expect(ids(left)).toEqual(ids([kept[1]!, kept[0]!, old[3]!, old[1]!]));
        expect(await log().pruneAuditEntries({ before: T0, limit: 3 })).toBe(2);
        expect(await log().pruneAuditEntries({ before: T0, limit: 3 })).toBe(0);
        expect(ids(await log().listAuditEntries({ limit: 100 }))).toEqual(ids([kept[1]!, kept[0]!]));
        expect(await log().appendAuditEntry(newAuditEntry({ key: "old-5" }))).toBe(true);
      });
    },
    noAuditLog,
  );
}
