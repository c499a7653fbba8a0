// Letters, digits and `_ . : - /`; 1-255 characters; no leading or trailing dot.
const EVENT_TYPE = /^(?!\.)[A-Za-z0-9_.:\-/]{1,255}(?<!\.)$/;
const TYPE_GLOB = /^(?!\.)[A-Za-z0-9_.:\-/*]{1,255}(?<!\.)$/;

const matchNothing = (_type: string): boolean => false;
const matchEverything = (_type: string): boolean => true;

/**
 * Compiles an endpoint's type globs into one predicate. `*` matches any run of characters,
 * dots included, so `"*"` matches every type and `"order.*"` matches `order.created` and
 * `order.item.created`. Every other character is literal. An empty list matches nothing.
 * @example
 * const matches = compileTypeGlobs(["order.*", "invoice.paid"]);
 * matches("order.item.created"); // true
 */
export function compileTypeGlobs(globs: readonly string[]): (type: string) => boolean {
  if (globs.length === 0) return matchNothing;
  const exact = new Set<string>();
  const wildcards: (readonly string[])[] = [];
  for (const glob of new Set(globs)) {
    if (!glob.includes("*")) exact.add(glob);
    else if (/^\*+$/.test(glob)) return matchEverything;
    else wildcards.push(glob.split("*"));
  }
  return (type) => exact.has(type) || wildcards.some((segments) => matchesSegments(segments, type));
}

// Not a RegExp: `a*a*a*…b` against a long type backtracks for minutes in a regex engine, and globs
// come from endpoint configuration. Taking each literal at its leftmost position is exact for
// `*`-only globs and linear in the type's length per segment.
function matchesSegments(segments: readonly string[], type: string): boolean {
  const first = segments[0]!;
  const last = segments[segments.length - 1]!;
  if (type.length < first.length + last.length) return false;
  if (!type.startsWith(first) || !type.endsWith(last)) return false;
  let from = first.length;
  const end = type.length - last.length;
  for (let i = 1; i < segments.length - 1; i++) {
    const at = type.indexOf(segments[i]!, from);
    if (at === -1 || at + segments[i]!.length > end) return false;
    from = at + segments[i]!.length;
  }
  return true;
}

/** True for a valid event type: 1-255 characters of `A-Z a-z 0-9 _ . : - /`, not starting or ending with a dot. */
export function isValidEventType(type: unknown): type is string {
  return typeof type === "string" && EVENT_TYPE.test(type);
}

/** True for a valid type glob: an event type that may also contain `*` wildcards. */
export function isValidTypeGlob(glob: unknown): glob is string {
  return typeof glob === "string" && TYPE_GLOB.test(glob);
}
