import { inspect } from "node:util";

/**
 * Where `secret` can be read from `error`: every own property (string and symbol keys, enumerable or
 * not, getters read), down every nested object and `cause`, bytes included, plus what `util.inspect`
 * (hidden fields shown) and `JSON.stringify` print. Empty when it is nowhere.
 */
export function findSecret(error: unknown, secret: string): string[] {
  const found: string[] = [];
  const seen = new Set<object>();
  const walk = (value: unknown, path: string): void => {
    if (typeof value === "string") {
      if (value.includes(secret)) found.push(path);
      return;
    }
    if ((typeof value !== "object" && typeof value !== "function") || value === null || seen.has(value))
      return;
    seen.add(value);
    if (ArrayBuffer.isView(value)) {
      if (Buffer.from(value.buffer, value.byteOffset, value.byteLength).includes(secret)) found.push(path);
      return;
    }
    for (const key of Reflect.ownKeys(value)) {
      const property = Object.getOwnPropertyDescriptor(value, key);
      let child: unknown;
      try {
        child = property && "value" in property ? property.value : Reflect.get(value, key);
      } catch {
        continue;
      }
      walk(child, `${path}.${String(key)}`);
    }
  };
  walk(error, "error");
  if (inspect(error, { showHidden: true, depth: Number.POSITIVE_INFINITY }).includes(secret)) {
    found.push("util.inspect(error)");
  }
  try {
    if ((JSON.stringify(error) ?? "").includes(secret)) found.push("JSON.stringify(error)");
  } catch {
    // a cycle: inspect above printed it anyway
  }
  return found;
}
