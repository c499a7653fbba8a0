/**
 * A value the caller passed, quoted for an error message: JSON where it can be (`"ep_1"`, `42`),
 * else its kind. Never throws, unlike `JSON.stringify` on a BigInt or a cycle, so a bad input
 * always gets its coded error rather than a TypeError from building the message.
 */
export function quote(value: unknown): string {
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  try {
    return JSON.stringify(value) ?? String(typeof value);
  } catch {
    return `a value of type ${Array.isArray(value) ? "array" : typeof value}`;
  }
}
