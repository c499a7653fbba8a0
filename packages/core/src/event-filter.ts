/** A JSON value that is not an object or array. */
export type JsonPrimitive = string | number | boolean | null;

/** Operators on the value at one path; several in one condition must all hold. */
export interface FilterOperators {
  $eq?: JsonPrimitive;
  $ne?: JsonPrimitive;
  $in?: JsonPrimitive[];
  $nin?: JsonPrimitive[];
  $gt?: number;
  $gte?: number;
  $lt?: number;
  $lte?: number;
  $exists?: boolean;
  $prefix?: string;
}

/** A primitive (equality) or an object of operators, applied to the value at one path. */
export type FilterCondition = JsonPrimitive | FilterOperators;

/**
 * A JSON-serialisable predicate on an event, stored with an endpoint. Keys are dot paths into the
 * event (`"type"`, `"tenantId"`, `"data.amount"`, `"data.items.0.sku"`); every key must match.
 * `$and` / `$or` take lists of filters and `$not` one filter. A missing value equals nothing
 * (not even `null`); use `{ $exists: false }` to ask for absence. `tenantId` is `null` on an event
 * without a tenant.
 * @example
 * const filter: EventFilter = { type: { $prefix: "order." }, "data.amount": { $gte: 100 } };
 */
export type EventFilter = {
  $and?: EventFilter[];
  $or?: EventFilter[];
  $not?: EventFilter;
  [path: string]: FilterCondition | EventFilter | EventFilter[] | undefined;
};

/** The parts of an event a filter can see. */
export interface FilterableEvent {
  type: string;
  data: unknown;
  tenantId?: string | null;
}

const ROOTS = new Set(["type", "tenantId", "data"]);
const PRIMITIVE_OPERATORS = new Set(["$eq", "$ne"]);
const LIST_OPERATORS = new Set(["$in", "$nin"]);
const NUMBER_OPERATORS = new Set(["$gt", "$gte", "$lt", "$lte"]);
const OPERATORS = [...PRIMITIVE_OPERATORS, ...LIST_OPERATORS, ...NUMBER_OPERATORS, "$exists", "$prefix"];
const MAX_DEPTH = 32;

/**
 * Lists every problem in a filter, each with its location and the fix; an empty list means valid.
 * @example
 * validateEventFilter({ "data.amount": { $gt: "10" } });
 * // ['filter["data.amount"].$gt must be a finite number, got "10"']
 */
export function validateEventFilter(filter: unknown): string[] {
  const problems: string[] = [];
  checkFilter(filter, "filter", problems, 0);
  return problems;
}

function checkFilter(filter: unknown, at: string, problems: string[], depth: number): void {
  if (!isPlainObject(filter)) {
    problems.push(`${at} must be an object of { path: condition }, got ${show(filter)}`);
    return;
  }
  if (depth > MAX_DEPTH) {
    problems.push(`${at} nests deeper than ${MAX_DEPTH} levels of $and/$or/$not; flatten it`);
    return;
  }
  for (const [key, value] of Object.entries(filter)) {
    const here = `${at}[${JSON.stringify(key)}]`;
    if (key === "$and" || key === "$or") {
      if (!Array.isArray(value) || value.length === 0) {
        problems.push(`${at}.${key} must be a non-empty array of filters, got ${show(value)}`);
      } else {
        for (const [i, child] of value.entries())
          checkFilter(child, `${at}.${key}[${i}]`, problems, depth + 1);
      }
    } else if (key === "$not") {
      checkFilter(value, `${at}.$not`, problems, depth + 1);
    } else if (key.startsWith("$")) {
      problems.push(
        `${here} is not a known combinator; use $and, $or or $not, or a path like "data.${key.slice(1)}"`,
      );
    } else if (!isValidPath(key)) {
      problems.push(
        `${here} is not a valid path; paths are "type", "tenantId", "data" or "data.<field>.<field>" (no empty segments)`,
      );
    } else {
      checkCondition(value, here, problems);
    }
  }
}

function checkCondition(condition: unknown, at: string, problems: string[]): void {
  if (isPrimitive(condition)) return;
  if (!isPlainObject(condition)) {
    problems.push(
      `${at} must be a string, finite number, boolean, null or an object of operators, got ${show(condition)}`,
    );
    return;
  }
  const entries = Object.entries(condition);
  if (entries.length === 0) problems.push(`${at} has no operators; use one of ${OPERATORS.join(", ")}`);
  for (const [op, operand] of entries) {
    const here = `${at}.${op}`;
    if (PRIMITIVE_OPERATORS.has(op)) {
      if (!isPrimitive(operand))
        problems.push(`${here} must be a string, finite number, boolean or null, got ${show(operand)}`);
    } else if (LIST_OPERATORS.has(op)) {
      if (!Array.isArray(operand) || !operand.every(isPrimitive)) {
        problems.push(
          `${here} must be an array of strings, finite numbers, booleans or nulls, got ${show(operand)}`,
        );
      }
    } else if (NUMBER_OPERATORS.has(op)) {
      if (typeof operand !== "number" || !Number.isFinite(operand)) {
        problems.push(`${here} must be a finite number, got ${show(operand)}`);
      }
    } else if (op === "$exists") {
      if (typeof operand !== "boolean") problems.push(`${here} must be true or false, got ${show(operand)}`);
    } else if (op === "$prefix") {
      if (typeof operand !== "string") problems.push(`${here} must be a string, got ${show(operand)}`);
    } else {
      problems.push(`${here} is not a known operator; use one of ${OPERATORS.join(", ")}`);
    }
  }
}

/**
 * True when `event` satisfies `filter`. Expects a filter that `validateEventFilter` accepted;
 * anything it would reject (such as an unknown operator) matches nothing, so a bad filter fails closed.
 * @example
 * matchesEventFilter({ "data.amount": { $gte: 100 } }, { type: "order.created", data: { amount: 250 } }); // true
 */
export function matchesEventFilter(filter: EventFilter, event: FilterableEvent): boolean {
  if (!isPlainObject(filter)) return false;
  for (const [key, value] of Object.entries(filter)) {
    if (value === undefined) continue;
    let ok: boolean;
    if (key === "$and") ok = Array.isArray(value) && value.every((child) => matchesEventFilter(child, event));
    else if (key === "$or")
      ok = Array.isArray(value) && value.some((child) => matchesEventFilter(child, event));
    else if (key === "$not") ok = isPlainObject(value) && !matchesEventFilter(value as EventFilter, event);
    else if (key.startsWith("$") || !isValidPath(key)) ok = false;
    else ok = matchesCondition(value as FilterCondition, resolvePath(event, key));
    if (!ok) return false;
  }
  return true;
}

function matchesCondition(condition: FilterCondition, value: unknown): boolean {
  if (!isPlainObject(condition)) return value === condition;
  for (const [op, operand] of Object.entries(condition)) {
    if (!matchesOperator(op, operand, value)) return false;
  }
  return true;
}

function matchesOperator(op: string, operand: unknown, value: unknown): boolean {
  switch (op) {
    case "$eq":
      return value === operand;
    case "$ne":
      return value !== operand;
    case "$in":
      return Array.isArray(operand) && operand.includes(value);
    case "$nin":
      return Array.isArray(operand) && !operand.includes(value);
    case "$gt":
      return typeof value === "number" && typeof operand === "number" && value > operand;
    case "$gte":
      return typeof value === "number" && typeof operand === "number" && value >= operand;
    case "$lt":
      return typeof value === "number" && typeof operand === "number" && value < operand;
    case "$lte":
      return typeof value === "number" && typeof operand === "number" && value <= operand;
    case "$exists":
      return (value !== undefined) === operand;
    case "$prefix":
      return typeof value === "string" && typeof operand === "string" && value.startsWith(operand);
    default:
      return false;
  }
}

// An event without a tenant has tenantId null whether the field is absent or null.
// Own properties only, so "data.constructor" or "data.__proto__" never reach the prototype chain.
function resolvePath(event: FilterableEvent, path: string): unknown {
  const [root, ...rest] = path.split(".");
  let current: unknown =
    root === "type"
      ? event.type
      : root === "tenantId"
        ? (event.tenantId ?? null)
        : root === "data"
          ? event.data
          : undefined;
  for (const segment of rest) {
    if (typeof current !== "object" || current === null || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function isValidPath(path: string): boolean {
  const segments = path.split(".");
  if (!ROOTS.has(segments[0]!)) return false;
  if (segments[0] !== "data" && segments.length > 1) return false;
  return segments.every((segment) => segment.length > 0);
}

function isPrimitive(value: unknown): value is JsonPrimitive {
  return (
    value === null ||
    typeof value === "string" ||
    typeof value === "boolean" ||
    (typeof value === "number" && Number.isFinite(value))
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function show(value: unknown): string {
  if (value === undefined) return "undefined";
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  try {
    return JSON.stringify(value) ?? typeof value;
  } catch {
    return typeof value;
  }
}
