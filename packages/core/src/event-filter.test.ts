import { describe, expect, test } from "vitest";
import {
  type EventFilter,
  type FilterableEvent,
  matchesEventFilter,
  validateEventFilter,
} from "./event-filter.js";

const order: FilterableEvent = {
  type: "order.created",
  tenantId: "acme",
  data: {
    amount: 250,
    currency: "EUR",
    express: true,
    coupon: null,
    customer: { country: "FR", tier: "gold" },
    items: [{ sku: "A-1" }, { sku: "B-2" }],
  },
};

describe("matchesEventFilter", () => {
  test.each<[string, EventFilter, boolean]>([
    ["an empty filter matches everything", {}, true],
    ["equality on type", { type: "order.created" }, true],
    ["equality on type, other value", { type: "order.updated" }, false],
    ["equality on tenantId", { tenantId: "acme" }, true],
    ["equality on a nested field", { "data.customer.country": "FR" }, true],
    ["equality is strict: 250 is not '250'", { "data.amount": "250" }, false],
    ["equality on a boolean", { "data.express": true }, true],
    ["null equals null", { "data.coupon": null }, true],
    ["null does not equal a missing field", { "data.discount": null }, false],
    ["an object value equals no primitive", { "data.customer": "FR" }, false],
    ["array elements by index", { "data.items.1.sku": "B-2" }, true],
    ["an index past the end is missing", { "data.items.5.sku": { $exists: false } }, true],
    ["all keys must match (AND)", { type: "order.created", "data.currency": "USD" }, false],
    ["$eq", { "data.currency": { $eq: "EUR" } }, true],
    ["$ne on a different value", { "data.currency": { $ne: "USD" } }, true],
    ["$ne on the same value", { "data.currency": { $ne: "EUR" } }, false],
    ["$ne matches a missing field", { "data.discount": { $ne: 5 } }, true],
    ["$in", { "data.customer.country": { $in: ["FR", "DE"] } }, true],
    ["$in without the value", { "data.customer.country": { $in: ["US"] } }, false],
    ["$in an empty list", { "data.customer.country": { $in: [] } }, false],
    ["$nin", { "data.customer.country": { $nin: ["US", "CA"] } }, true],
    ["$nin with the value", { "data.customer.country": { $nin: ["FR"] } }, false],
    ["$nin matches a missing field", { "data.region": { $nin: ["EU"] } }, true],
    ["$gt below", { "data.amount": { $gt: 100 } }, true],
    ["$gt equal", { "data.amount": { $gt: 250 } }, false],
    ["$gte equal", { "data.amount": { $gte: 250 } }, true],
    ["$lt equal", { "data.amount": { $lt: 250 } }, false],
    ["$lte equal", { "data.amount": { $lte: 250 } }, true],
    ["a range", { "data.amount": { $gte: 100, $lt: 500 } }, true],
    ["a range it falls outside", { "data.amount": { $gte: 100, $lt: 200 } }, false],
    ["comparisons need a number: a string never compares", { "data.currency": { $gt: 0 } }, false],
    ["comparisons on a missing field are false", { "data.discount": { $lt: 10 } }, false],
    ["$exists true on a present field", { "data.amount": { $exists: true } }, true],
    ["$exists true on a null field", { "data.coupon": { $exists: true } }, true],
    ["$exists true on a missing field", { "data.discount": { $exists: true } }, false],
    ["$exists false on a missing field", { "data.discount": { $exists: false } }, true],
    ["$exists false through a primitive", { "data.amount.value": { $exists: false } }, true],
    ["$prefix", { type: { $prefix: "order." } }, true],
    ["$prefix mismatch", { type: { $prefix: "invoice." } }, false],
    ["$prefix on a number", { "data.amount": { $prefix: "2" } }, false],
    ["$and all true", { $and: [{ type: "order.created" }, { "data.amount": { $gt: 1 } }] }, true],
    ["$and one false", { $and: [{ type: "order.created" }, { "data.amount": { $gt: 1000 } }] }, false],
    ["$or one true", { $or: [{ type: "invoice.paid" }, { "data.express": true }] }, true],
    ["$or none true", { $or: [{ type: "invoice.paid" }, { "data.express": false }] }, false],
    ["$not", { $not: { "data.customer.tier": "gold" } }, false],
    ["$not of a miss", { $not: { "data.customer.tier": "silver" } }, true],
    [
      "nested combinators",
      { $or: [{ $and: [{ tenantId: "acme" }, { $not: { "data.currency": "USD" } }] }, { type: "x" }] },
      true,
    ],
    ["the prototype chain is not reachable", { "data.constructor": { $exists: true } }, false],
    ["__proto__ is not reachable", { "data.__proto__": { $exists: true } }, false],
  ])("%s", (_label, filter, expected) => {
    expect(validateEventFilter(filter)).toEqual([]);
    expect(matchesEventFilter(filter, order)).toBe(expected);
  });

  test.each<[string, FilterableEvent, boolean]>([
    ["absent", { type: "a", data: null }, true],
    ["null", { type: "a", data: null, tenantId: null }, true],
    ["set", { type: "a", data: null, tenantId: "acme" }, false],
  ])("{ tenantId: null } selects events without a tenant: tenantId %s → %s", (_label, event, expected) => {
    expect(matchesEventFilter({ tenantId: null }, event)).toBe(expected);
  });

  test("data may be a primitive: the path 'data' reaches it", () => {
    expect(matchesEventFilter({ data: 5 }, { type: "a", data: 5 })).toBe(true);
    expect(matchesEventFilter({ "data.x": { $exists: false } }, { type: "a", data: "text" })).toBe(true);
  });

  test.each<[string, unknown]>([
    ["an unknown operator", { "data.amount": { $regex: "." } }],
    ["an unknown combinator", { $nor: [{ type: "a" }] }],
    ["an unknown root", { "payload.amount": 1 }],
    ["$or that is not an array", { $or: { type: "order.created" } }],
  ])("an invalid filter fails closed: %s", (_label, filter) => {
    expect(validateEventFilter(filter)).not.toEqual([]);
    expect(matchesEventFilter(filter as EventFilter, order)).toBe(false);
  });
});

describe("validateEventFilter", () => {
  test("a filter survives a JSON round trip unchanged in meaning", () => {
    const filter: EventFilter = { $or: [{ "data.amount": { $gte: 100 } }, { type: { $in: ["a", "b"] } }] };
    const stored = JSON.parse(JSON.stringify(filter)) as unknown;
    expect(validateEventFilter(stored)).toEqual([]);
    expect(matchesEventFilter(stored as EventFilter, order)).toBe(true);
  });

  test.each<[string, unknown, string[]]>([
    ["not an object", "type=order", ['filter must be an object of { path: condition }, got "type=order"']],
    ["an array", [], ["filter must be an object of { path: condition }, got []"]],
    ["null", null, ["filter must be an object of { path: condition }, got null"]],
    [
      "an unknown root",
      { "payload.x": 1 },
      [
        'filter["payload.x"] is not a valid path; paths are "type", "tenantId", "data" or "data.<field>.<field>" (no empty segments)',
      ],
    ],
    [
      "an empty segment",
      { "data..x": 1 },
      [expect.stringContaining('filter["data..x"] is not a valid path')],
    ],
    [
      "a path below type",
      { "type.length": 1 },
      [expect.stringContaining('filter["type.length"] is not a valid path')],
    ],
    ["an empty path", { "": 1 }, [expect.stringContaining('filter[""] is not a valid path')]],
    [
      "an unknown combinator",
      { $amount: 1 },
      ['filter["$amount"] is not a known combinator; use $and, $or or $not, or a path like "data.amount"'],
    ],
    [
      "an unknown operator",
      { "data.x": { $regex: "^a" } },
      [
        expect.stringMatching(
          /^filter\["data.x"\]\.\$regex is not a known operator; use one of \$eq, \$ne, /,
        ),
      ],
    ],
    ["an empty condition", { "data.x": {} }, [expect.stringContaining('filter["data.x"] has no operators')]],
    [
      "an array condition",
      { "data.x": [1, 2] },
      [expect.stringContaining('filter["data.x"] must be a string')],
    ],
    ["a non-finite number", { "data.x": Number.NaN }, [expect.stringContaining('filter["data.x"] must be')]],
    ["$gt a string", { "data.x": { $gt: "10" } }, ['filter["data.x"].$gt must be a finite number, got "10"']],
    [
      "$lte infinity",
      { "data.x": { $lte: Number.POSITIVE_INFINITY } },
      [expect.stringContaining("Infinity")],
    ],
    [
      "$eq an object",
      { "data.x": { $eq: { a: 1 } } },
      [expect.stringContaining('filter["data.x"].$eq must be')],
    ],
    [
      "$in not an array",
      { "data.x": { $in: "a" } },
      [expect.stringContaining('filter["data.x"].$in must be an array')],
    ],
    [
      "$nin with an object",
      { "data.x": { $nin: [{}] } },
      [expect.stringContaining(".$nin must be an array")],
    ],
    [
      "$exists a string",
      { "data.x": { $exists: "yes" } },
      ['filter["data.x"].$exists must be true or false, got "yes"'],
    ],
    ["$prefix a number", { type: { $prefix: 1 } }, ['filter["type"].$prefix must be a string, got 1']],
    ["$and empty", { $and: [] }, ["filter.$and must be a non-empty array of filters, got []"]],
    ["$not an array", { $not: [] }, ["filter.$not must be an object of { path: condition }, got []"]],
    [
      "problems deep inside combinators, with their location",
      { $or: [{ type: "a" }, { $not: { "data.x": { $gt: "1" } } }] },
      ['filter.$or[1].$not["data.x"].$gt must be a finite number, got "1"'],
    ],
    [
      "every problem at once",
      { "data.a": { $gt: "1" }, "data.b": { $exists: 1 } },
      [expect.stringContaining('"data.a"'), expect.stringContaining('"data.b"')],
    ],
  ])("reports %s", (_label, filter, problems) => {
    expect(validateEventFilter(filter)).toEqual(problems);
  });

  test("rejects nesting deep enough to be an attack rather than a filter", () => {
    let filter: EventFilter = { type: "a" };
    for (let i = 0; i < 40; i++) filter = { $not: filter };
    expect(validateEventFilter(filter)).toEqual([expect.stringContaining("nests deeper than 32 levels")]);
  });
});
