import { unstorable } from "../storable-text.js";

/**
 * True for an id that could name a stored row: a string the storage can hold. Anything else (not
 * a string, or text with NUL or a lone surrogate, which PostgreSQL refuses as a parameter) names
 * nothing, so a lookup answers "not found" without asking the storage.
 */
export function isLookupId(id: unknown): id is string {
  return typeof id === "string" && unstorable(id) === null;
}
