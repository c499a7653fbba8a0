import { describe, expect, test } from "vitest";
import { compileStatement, statement } from "./statement.js";

describe("statement", () => {
  test("every value is a parameter, in order; a nested statement is spliced with its own", () => {
    const inner = statement`SELECT id FROM t WHERE k = ${"a'; DROP TABLE t; --"}`;
    const outer = statement`WITH x AS (${inner}) SELECT ${1}, ${null}, ${[1, 2]} FROM x WHERE y = ${"b"}`;
    expect(compileStatement(outer, (n) => `$${n}`)).toEqual({
      text: "WITH x AS (SELECT id FROM t WHERE k = $1) SELECT $2, $3, $4 FROM x WHERE y = $5",
      params: ["a'; DROP TABLE t; --", 1, null, [1, 2], "b"],
    });
    expect(compileStatement(outer, () => "?").text).toBe(
      "WITH x AS (SELECT id FROM t WHERE k = ?) SELECT ?, ?, ? FROM x WHERE y = ?",
    );
  });
});
