import { expect } from "vitest";
import { isPostelError } from "../../src/errors.js";

/** The PostelError `promise` rejects with (the test fails if it resolves or rejects with anything else). */
export async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isPostelError(error), `expected a PostelError, got ${String(error)}`).toBe(true);
  return error as { code: string; message: string };
}
