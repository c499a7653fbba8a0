import { describe, expect, test } from "vitest";
import { compileTypeGlobs, isValidEventType, isValidTypeGlob } from "./type-glob.js";

describe("compileTypeGlobs", () => {
  test.each<[string[], string, boolean]>([
    [["*"], "order.created", true],
    [["*"], "a", true],
    [["*"], "", true],
    [["**"], "anything.at.all", true],
    [["order.*"], "order.created", true],
    [["order.*"], "order.item.created", true],
    [["order.*"], "order.", true],
    [["order.*"], "order", false],
    [["order.*"], "orders.created", false],
    [["order.*"], "xorder.created", false],
    [["order.*"], "reorder.created", false],
    [["order.created"], "order.created", true],
    [["order.created"], "order.created.v2", false],
    [["order.created"], "order.createdX", false],
    [["order.created"], "orderXcreated", false],
    [["*.created"], "order.created", true],
    [["*.created"], "order.item.created", true],
    [["*.created"], "order.updated", false],
    [["order.*.created"], "order.item.created", true],
    [["order.*.created"], "order.created", false],
    [["order*"], "orders.paid", true],
    [["a*b*c"], "aXXbYYc", true],
    [["a*b*c"], "acb", false],
    [["invoice:paid"], "invoice:paid", true],
    [["billing/invoice-paid"], "billing/invoice-paid", true],
    [["billing/invoice-paid"], "billing/invoiceXpaid", false],
    [["a+b"], "aab", false],
    [["a+b"], "a+b", true],
    [["(a|b)"], "a", false],
    [["order.created", "invoice.*"], "invoice.paid", true],
    [["order.created", "invoice.*"], "order.created", true],
    [["order.created", "invoice.*"], "order.updated", false],
    [[], "order.created", false],
    [[], "", false],
  ])("%j matches %j: %s", (globs, type, expected) => {
    expect(compileTypeGlobs(globs)(type)).toBe(expected);
  });

  test("the compiled predicate can be reused across many types", () => {
    const matches = compileTypeGlobs(["user.*"]);
    expect(["user.a", "user.b", "admin.a", "user.c"].filter(matches)).toEqual(["user.a", "user.b", "user.c"]);
  });
});

describe("isValidEventType", () => {
  test.each([
    ["order.created", true],
    ["a", true],
    ["invoice:paid", true],
    ["billing/invoice-paid", true],
    ["USER_signed_up.v2", true],
    ["x".repeat(255), true],
    ["x".repeat(256), false],
    ["", false],
    [".order", false],
    ["order.", false],
    ["order created", false],
    ["order.*", false],
    ["ordér", false],
    ["order\n", false],
    [42, false],
    [null, false],
  ])("%j → %s", (type, expected) => {
    expect(isValidEventType(type)).toBe(expected);
  });
});

describe("isValidTypeGlob", () => {
  test.each([
    ["*", true],
    ["order.*", true],
    ["*.created", true],
    ["order.created", true],
    ["a*b", true],
    ["*".repeat(255), true],
    ["*".repeat(256), false],
    ["", false],
    [".*", false],
    ["order.", false],
    ["order?", false],
    ["order.[ab]", false],
    [["*"], false],
    [undefined, false],
  ])("%j → %s", (glob, expected) => {
    expect(isValidTypeGlob(glob)).toBe(expected);
  });
});

describe("compileTypeGlobs on hostile globs", () => {
  test("many wildcards against a long type answer quickly (no regex backtracking)", () => {
    const matches = compileTypeGlobs([`${"*a".repeat(100)}*b`]);
    const started = performance.now();
    expect(matches("a".repeat(255))).toBe(false);
    expect(matches(`${"a".repeat(254)}b`)).toBe(true);
    expect(performance.now() - started).toBeLessThan(500);
  });

  test("a prefix and suffix may not overlap", () => {
    expect(compileTypeGlobs(["ab*ba"])("aba")).toBe(false);
    expect(compileTypeGlobs(["ab*ba"])("abba")).toBe(true);
  });

  test("a middle literal may not overlap the suffix", () => {
    expect(compileTypeGlobs(["a*bc*c"])("abc")).toBe(false);
    expect(compileTypeGlobs(["a*bc*c"])("abcc")).toBe(true);
  });
});
