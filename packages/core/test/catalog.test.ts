import { type } from "arktype";
import * as v from "valibot";
import { describe, expect, expectTypeOf, test } from "vitest";
import { z } from "zod";
import { ManualClock } from "../src/clock.js";
import { ConfigurationError } from "../src/errors.js";
import { type AnyEventCatalog, defineEvents } from "../src/outbound/catalog.js";
import type { SendEvent } from "../src/outbound/types.js";
import { Postel, type SendInput } from "../src/postel.js";
import { InMemoryStorage } from "../src/storage/in-memory-storage.js";
import { refusal } from "./support/refusal.js";

const events = defineEvents({
  "order.created": {
    schema: v.object({ id: v.string(), total: v.number(), note: v.optional(v.pipe(v.string(), v.trim())) }),
    description: "An order was placed.",
    examples: [{ id: "ord_1", total: 12.5 }],
    group: "orders",
  },
  "order.refunded": {
    schema: z.object({ id: z.string(), amount: z.number().positive() }),
    description: "Some or all of an order's total went back to the customer.",
    examples: [{ id: "ord_1", amount: 2 }],
  },
  "customer.updated": {
    schema: type({ id: "string", email: "string.email" }),
    description: "A customer changed their details.",
    examples: [{ id: "cus_1", email: "a@example.com" }],
    deprecated: "use customer.changed",
  },
  "customer.changed": {
    // An asynchronous schema: send() awaits it before anything is written.
    schema: v.pipeAsync(
      v.object({ id: v.string() }),
      v.checkAsync(async (input) => input.id.startsWith("cus_"), "must be a customer id (cus_...)"),
    ),
    description: "A customer changed their details.",
    examples: [{ id: "cus_1" }],
  },
});

function postelWith<E extends AnyEventCatalog | undefined>(catalog: E) {
  const storage = InMemoryStorage();
  const postel = Postel({
    clock: new ManualClock(),
    outbound: { storage, events: catalog, http: { allowPrivateNetworks: true } },
  });
  return { postel, storage };
}

describe("defineEvents()", () => {
  test("lists every bad type name, description, example, group and field, with its path", () => {
    let thrown: unknown;
    try {
      defineEvents({
        "has space": { schema: v.string(), description: "x", examples: ["a"] },
        ".leading": { schema: v.string(), description: "x", examples: ["a"] },
        "order.created": {
          schema: v.object({ id: v.string() }),
          description: "two\nlines",
          examples: [{ id: 1 } as unknown as { id: string }],
          group: "",
          extra: true,
        } as never,
        "no.schema": { schema: {}, description: "x", examples: [1] } as never,
        "no.examples": { schema: v.string(), description: "x", examples: [] as never },
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigurationError);
    const error = thrown as ConfigurationError;
    expect(error.code).toBe("INVALID_CONFIGURATION");
    expect(error.issues.map((issue) => issue.path)).toEqual([
      '"has space"',
      '".leading"',
      '"order.created".extra',
      '"order.created".description',
      '"order.created".examples[0]',
      '"order.created".group',
      '"no.schema".schema',
      '"no.examples".examples',
    ]);
    expect(error.message).toContain('"order.created".examples[0]: fails its schema at data.id');
  });

  test("refuses a catalog that declares nothing", () => {
    expect(() => defineEvents({})).toThrow(/declares no event type/);
  });

  test("Postel() refuses events that did not come from defineEvents()", () => {
    expect(() =>
      Postel({ outbound: { storage: InMemoryStorage(), events: { "a.b": {} } as never } }),
    ).toThrow(/outbound\.events: must be an event catalog made by defineEvents/);
  });

  test("matching() lists the declared types a glob matches", () => {
    expect(events.matching("order.*")).toEqual(["order.created", "order.refunded"]);
    expect(events.matching("ordr.*")).toEqual([]);
    expect(events.types).toHaveLength(4);
  });
});

describe("send() with a catalog", () => {
  test("refuses an undeclared type and writes nothing", async () => {
    const { postel } = postelWith(events);
    // Untyped JavaScript callers get the same refusal at run time.
    const untyped = postel.outbound as unknown as { send(event: SendEvent): Promise<unknown> };
    const error = await refusal(untyped.send({ type: "order.creatd", data: { id: "x", total: 1 } }));
    expect(error.code).toBe("UNKNOWN_EVENT_TYPE");
    expect(error.message).toContain(
      '"order.creatd" is not in the event catalog (order.created, order.refunded',
    );
    expect((await postel.outbound.messages.list()).items).toHaveLength(0);
  });

  test.each([
    ["valibot", "order.created", { id: 1, total: "12" }, ["data.id", "data.total"]],
    ["zod 4", "order.refunded", { id: "ord_1", amount: -3 }, ["data.amount"]],
    ["arktype", "customer.updated", { id: "cus_1", email: "not an email" }, ["data.email"]],
    ["an asynchronous valibot schema", "customer.changed", { id: "ord_1" }, ["data"]],
  ])(
    "refuses data its schema (%s) refuses, naming the type and every path, and writes nothing",
    async (_, type, data, paths) => {
      const { postel } = postelWith(events);
      const untyped = postel.outbound as unknown as { send(event: SendEvent): Promise<unknown> };
      const error = await refusal(untyped.send({ type, data }));
      expect(error.code).toBe("INVALID_EVENT_DATA");
      expect(error.message).toContain(`Event data does not match the schema of "${type}"`);
      for (const path of paths)
        expect(error.message).toMatch(new RegExp(`  - ${path.replace(".", "\\.")}: `));
      expect((await postel.outbound.messages.list()).items).toHaveLength(0);
    },
  );

  test("stores the schema's output: what is signed and delivered is what the schema produced", async () => {
    const { postel } = postelWith(events);
    const { id } = await postel.outbound.send({
      type: "order.created",
      data: { id: "ord_2", total: 3, note: "  gift wrap  " },
    });
    expect((await postel.outbound.messages.get(id))?.data).toEqual({
      id: "ord_2",
      total: 3,
      note: "gift wrap",
    });
  });

  test("an asynchronous schema is awaited, then the message is written", async () => {
    const { postel } = postelWith(events);
    const { id } = await postel.outbound.send({ type: "customer.changed", data: { id: "cus_9" } });
    expect((await postel.outbound.messages.get(id))?.data).toEqual({ id: "cus_9" });
  });

  test("a deprecated type is still sent", async () => {
    const { postel } = postelWith(events);
    const { id } = await postel.outbound.send({
      type: "customer.updated",
      data: { id: "cus_1", email: "a@example.com" },
    });
    expect((await postel.outbound.messages.get(id))?.type).toBe("customer.updated");
  });

  test("sendBatch() names the first failing event's index and writes none of the batch", async () => {
    const { postel } = postelWith(events);
    const untyped = postel.outbound as unknown as { sendBatch(events: SendEvent[]): Promise<unknown> };
    const error = await refusal(
      untyped.sendBatch([
        { type: "order.created", data: { id: "a", total: 1 } },
        { type: "customer.changed", data: { id: "nope" } },
        { type: "order.created", data: { id: 2, total: 1 } },
      ]),
    );
    expect(error.code).toBe("INVALID_EVENT_DATA");
    expect(error.message).toMatch(/^events\[1\]: Event data does not match the schema of "customer.changed"/);
    const undeclared = await refusal(
      untyped.sendBatch([
        { type: "order.created", data: { id: "a", total: 1 } },
        { type: "order.deleted", data: {} },
      ]),
    );
    expect(undeclared.code).toBe("UNKNOWN_EVENT_TYPE");
    expect(undeclared.message).toMatch(/^events\[1\]: /);
    expect((await postel.outbound.messages.list()).items).toHaveLength(0);
  });

  test("shape errors keep their codes: the catalog checks a well-formed event's type and data", async () => {
    const { postel } = postelWith(events);
    const untyped = postel.outbound as unknown as { send(event: unknown): Promise<unknown> };
    expect((await refusal(untyped.send({ type: "has space", data: 1 }))).code).toBe("INVALID_EVENT_TYPE");
    expect((await refusal(untyped.send(null))).code).toBe("INVALID_EVENT");
  });
});

describe("endpoints with a catalog", () => {
  test("a glob that matches no declared type is refused on create and update, naming it", async () => {
    const { postel } = postelWith(events);
    const create = await refusal(
      postel.outbound.endpoints.create({ url: "https://example.com/hooks", types: ["order.*", "ordr.*"] }),
    );
    expect(create.code).toBe("INVALID_ENDPOINT");
    expect(create.message).toContain('types[1]: "ordr.*" matches no event type of the catalog');
    const endpoint = await postel.outbound.endpoints.create({
      url: "https://example.com/hooks",
      types: ["order.*"],
    });
    const update = await refusal(postel.outbound.endpoints.update(endpoint.id, { types: ["invoice.paid"] }));
    expect(update.message).toContain('types[0]: "invoice.paid" matches no event type');
    expect((await postel.outbound.endpoints.get(endpoint.id))?.types).toEqual(["order.*"]);
  });

  test("deprecated types still match; forType() lists who receives a type", async () => {
    const { postel } = postelWith(events);
    const customers = await postel.outbound.endpoints.create({
      url: "https://example.com/a",
      types: ["customer.updated"],
    });
    const everything = await postel.outbound.endpoints.create({ url: "https://example.com/b" });
    const acme = await postel.outbound.endpoints.create({
      url: "https://example.com/c",
      types: ["customer.*"],
      tenantId: "acme",
    });
    await postel.outbound.endpoints.create({ url: "https://example.com/d", types: ["order.*"] });
    const ids = async (type: string, options?: { tenantId?: string | null }) =>
      (await postel.outbound.endpoints.forType(type, options)).map((endpoint) => endpoint.id);
    expect(await ids("customer.updated")).toEqual([customers.id, everything.id, acme.id]);
    expect(await ids("customer.updated", { tenantId: null })).toEqual([customers.id, everything.id]);
    expect(await ids("customer.updated", { tenantId: "acme" })).toEqual([acme.id]);
    expect((await refusal(postel.outbound.endpoints.forType("customer.deleted"))).code).toBe(
      "UNKNOWN_EVENT_TYPE",
    );
  });
});

describe("without a catalog", () => {
  test("any valid type and any JSON data, as before; forType() takes any valid type", async () => {
    const { postel } = postelWith(undefined);
    await postel.outbound.send({ type: "anything.at.all", data: { whatever: [1, 2] } });
    await postel.outbound.endpoints.create({ url: "https://example.com/hooks", types: ["ordr.*"] });
    expect(await postel.outbound.endpoints.forType("ordr.created")).toHaveLength(1);
    expect((await refusal(postel.outbound.endpoints.forType("has space"))).code).toBe("INVALID_EVENT_TYPE");
  });
});

// Type tests: `tsc` (the package's typecheck) fails if any @ts-expect-error line compiles.
describe("types", () => {
  test("send() and sendBatch() take only declared types, with data inferred from their schemas", () => {
    const { postel } = postelWith(events);
    const typed = () => {
      void postel.outbound.send({ type: "order.created", data: { id: "a", total: 1 } }, {});
      void postel.outbound.send({
        type: "order.refunded",
        data: { id: "a", amount: 1 },
        idempotencyKey: "k",
      });
      void postel.outbound.sendBatch([
        { type: "customer.changed", data: { id: "cus_1" } },
        { type: "order.created", data: { id: "b", total: 2, note: "x" } },
      ]);
      // @ts-expect-error an undeclared type
      void postel.outbound.send({ type: "order.creatd", data: { id: "a", total: 1 } });
      // @ts-expect-error a field of the wrong type
      void postel.outbound.send({ type: "order.created", data: { id: "a", total: "1" } });
      // @ts-expect-error a missing field
      void postel.outbound.send({ type: "order.refunded", data: { id: "a" } });
      // @ts-expect-error another type's data
      void postel.outbound.sendBatch([{ type: "customer.changed", data: { id: "a", total: 1 } }]);
    };
    expect(typed).toBeTypeOf("function");
    type Input = SendInput<typeof events>;
    expectTypeOf<Extract<Input, { type: "order.created" }>["data"]>().toEqualTypeOf<{
      id: string;
      total: number;
      note?: string | undefined;
    }>();
    expectTypeOf<Input["type"]>().toEqualTypeOf<
      "order.created" | "order.refunded" | "customer.updated" | "customer.changed"
    >();
  });

  test("without a catalog, send() takes any SendEvent, as before", () => {
    const { postel } = postelWith(undefined);
    expectTypeOf(postel.outbound.send).parameter(0).toEqualTypeOf<SendEvent>();
    const plain = Postel({ outbound: { storage: InMemoryStorage() } });
    expectTypeOf(plain.outbound.send).parameter(0).toEqualTypeOf<SendEvent>();
  });

  test("examples are checked against their schema at compile time", () => {
    const declare = () =>
      defineEvents({
        "a.b": {
          schema: v.object({ n: v.number() }),
          description: "x",
          // @ts-expect-error an example that does not fit the schema
          examples: [{ n: "1" }],
        },
      });
    expect(declare).toThrow(ConfigurationError);
  });
});
