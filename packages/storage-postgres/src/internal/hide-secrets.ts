// postgres.js attaches each failed query's text and parameters to its error (`query`, `parameters`,
// `args`, `types`: read-only and non-configurable, so they cannot be blanked in place), and the server
// quotes a row's values in `detail` ("Failing row contains (…)") and parameters in `where`. For the
// writes that carry an endpoint's signing secrets, headers and metadata, the error is replaced by a
// copy of the same class with only the fields below (no query, parameters, detail or where), and
// every signing secret is cut out of their text (a trigger may RAISE one in its message).
const KEPT = [
  "name",
  "code",
  "errno",
  "syscall",
  "address",
  "port",
  "severity",
  "severity_local",
  "schema_name",
  "table_name",
  "column_name",
  "data_type_name",
  "constraint_name",
  "file",
  "line",
  "routine",
] as const;
const TEXT = ["message", "stack", "hint"] as const;
const REDACTED = "[secret]";

/** Awaits `write`; if it fails, throws a copy of its error that holds no query parameter and no `secrets`. */
export async function hidingSecrets<T>(write: Promise<T>, secrets: readonly string[]): Promise<T> {
  try {
    return await write;
  } catch (error) {
    throw withoutSecrets(
      error,
      secrets.filter((secret) => secret !== ""),
      0,
    );
  }
}

function withoutSecrets(error: unknown, secrets: readonly string[], depth: number): unknown {
  const redact = (text: string) => secrets.reduce((out, secret) => out.split(secret).join(REDACTED), text);
  if (typeof error === "string") return redact(error);
  if (typeof error !== "object" || error === null) return error;
  const copy = Object.create(Object.getPrototypeOf(error)) as object;
  for (const key of [...KEPT, ...TEXT, "cause"] as const) {
    const property = Object.getOwnPropertyDescriptor(error, key);
    if (property === undefined) continue;
    const value: unknown = "value" in property ? property.value : Reflect.get(error, key);
    const clean =
      key === "cause"
        ? depth < 4
          ? withoutSecrets(value, secrets, depth + 1)
          : undefined
        : typeof value === "string"
          ? redact(value)
          : typeof value === "number" || typeof value === "boolean"
            ? value
            : undefined;
    if (clean === undefined) continue;
    Object.defineProperty(copy, key, {
      value: clean,
      enumerable: property.enumerable === true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}
