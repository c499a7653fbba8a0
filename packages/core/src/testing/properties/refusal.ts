import { isPostelError } from "../../errors.js";
import type { BadInput } from "./bad-values.js";
import { countRefusal, type PropertyFigures } from "./figures.js";
import { changedParts, type StorageSnapshot } from "./snapshot.js";

/** A short, printable preview of a generated value (values may be megabytes long). */
export function preview(value: unknown): string {
  let text: string;
  try {
    text = typeof value === "string" ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return text.length > 160 ? `${text.slice(0, 160)}… (${text.length} characters)` : text;
}

/**
 * Runs `call` with a bad input between two snapshots and counts the outcome. Throws (failing the
 * property, so fast-check shrinks it) unless the call threw a `PostelError` with one of the input's
 * codes and left the storage exactly as it was.
 */
export async function expectRefusal(
  bad: BadInput,
  figures: PropertyFigures,
  snapshot: () => Promise<StorageSnapshot>,
  call: () => Promise<unknown>,
): Promise<void> {
  const before = await snapshot();
  let error: unknown;
  let accepted = false;
  try {
    await call();
    accepted = true;
  } catch (caught) {
    error = caught;
  }
  const changed = changedParts(before, await snapshot());
  figures.tried++;
  const input = `${bad.what}: ${preview(bad.value)}`;
  if (accepted) {
    figures.falseAccepts++;
    throw new Error(
      `accepted a bad input (${input})${changed.length ? `; it wrote ${changed.join(", ")}` : ""}`,
    );
  }
  countRefusal(figures, error);
  if (!isPostelError(error)) {
    throw new Error(`threw an uncoded ${describeError(error)} for ${input}`, { cause: error });
  }
  if (changed.length > 0) {
    figures.writes++;
    throw new Error(`refused ${input} with ${error.code} but changed ${changed.join(", ")}`);
  }
  if (!bad.codes.includes(error.code)) {
    throw new Error(
      `refused ${input} with ${error.code}, expected one of ${bad.codes.join(", ")}: ${error.message}`,
    );
  }
}

function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.constructor.name}: ${error.message.split("\n")[0]}`;
  return `non-Error ${preview(error)}`;
}
