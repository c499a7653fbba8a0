import { expect, test } from "vitest";
import { placeholder } from "./index.js";

test("placeholder", () => {
  expect(placeholder + 1).toBe(2);
});
