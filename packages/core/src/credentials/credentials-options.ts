import type { ConfigurationIssue } from "../errors.js";
import { KEY_ID } from "./sealed-value.js";

/** One data key of `outbound.credentials.keys`. */
export interface EncryptionKey {
  /** Names the key inside every value it encrypts: 1 to 32 of `A-Z a-z 0-9 _ -`, e.g. `"2026-01"`. */
  id: string;
  /** 32 random bytes, or their base64 (e.g. the output of `openssl rand -base64 32`). */
  key: Uint8Array | string;
}

/**
 * Where encryption keys come from, for a KMS: `primaryKeyId` names the key new values are encrypted
 * with, `key(id)` gives the 32 bytes of a key (e.g. a data key unwrapped by the KMS). Postel asks for
 * each id once per process and keeps the answer; a rejection is asked again on the next read.
 * @example
 * const keyring: Keyring = {
 *   primaryKeyId: "2026-01",
 *   key: async (id) => new Uint8Array(await kms.decrypt(wrappedDataKeys[id])),
 * };
 */
export interface Keyring {
  readonly primaryKeyId: string;
  key(id: string): Promise<Uint8Array>;
}

/**
 * `outbound.credentials`: how endpoint signing secrets and custom header values are stored.
 * - `{ keys: [{ id, key }, ...] }`: AES-256-GCM; the first key encrypts, every key decrypts.
 * - `{ keyring }`: the same with keys from a KMS (see `Keyring`).
 * - `{ encryption: "off" }`: plain text, as without the option, but without the start-up warning.
 */
export type CredentialsOptions =
  | { keys: readonly EncryptionKey[] }
  | { keyring: Keyring }
  | { encryption: "off" };

/** `outbound.credentials` after validation. */
export interface CredentialsSettings {
  /** Null: credentials are stored in plain text. */
  keyring: Keyring | null;
  /** True when encryption is off without `encryption: "off"` saying so (the start-up warning). */
  warnPlaintext: boolean;
}

/** Most keys `keys` may list (every one is tried by id, never in turn: the count costs nothing per read). */
const MAX_KEYS = 100;
const KEY_BYTES = 32;
const BASE64_KEY = /^[A-Za-z0-9+/_-]{43}=?$/;

const HOW = "a 32-byte key: 32 random bytes as a Uint8Array, or their base64, e.g. `openssl rand -base64 32`";
const ID_RULE = 'must be 1 to 32 of A-Z a-z 0-9 _ -, e.g. "2026-01"';

/** Validates `outbound.credentials` (`path` is where it sits), adding coded issues to `issues`. */
export function parseCredentialsOptions(
  raw: unknown,
  path: string,
  issues: ConfigurationIssue[],
): CredentialsSettings {
  const off: CredentialsSettings = { keyring: null, warnPlaintext: raw === undefined };
  if (raw === undefined) return off;
  const issue = (at: string, code: string, message: string) =>
    issues.push({ path: at, code, message: `${message} (${code})` });
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    issue(
      path,
      "INVALID_CREDENTIALS_OPTIONS",
      'must be { keys: [{ id, key }] }, { keyring } or { encryption: "off" }',
    );
    return off;
  }
  const given = Object.keys(raw);
  const known = ["keys", "keyring", "encryption"];
  for (const key of given.filter((k) => !known.includes(k))) {
    issue(`${path}.${key}`, "INVALID_CREDENTIALS_OPTIONS", "unknown option (check the spelling)");
  }
  const chosen = given.filter((k) => known.includes(k));
  if (chosen.length !== 1) {
    issue(path, "INVALID_CREDENTIALS_OPTIONS", 'must set exactly one of keys, keyring or encryption: "off"');
    return off;
  }
  const options = raw as Record<string, unknown>;
  if (chosen[0] === "encryption") {
    if (options["encryption"] !== "off") {
      issue(
        `${path}.encryption`,
        "INVALID_CREDENTIALS_OPTIONS",
        'must be "off"; to encrypt, pass keys: [{ id, key }] or a keyring instead',
      );
    }
    return { keyring: null, warnPlaintext: false };
  }
  const keyring =
    chosen[0] === "keyring"
      ? parseKeyring(options["keyring"], `${path}.keyring`, issue)
      : parseKeys(options["keys"], `${path}.keys`, issue);
  return { keyring, warnPlaintext: false };
}

type Issue = (path: string, code: string, message: string) => void;

function parseKeyring(raw: unknown, path: string, issue: Issue): Keyring | null {
  const keyring = raw as Partial<Keyring> | null;
  if (typeof keyring !== "object" || keyring === null || typeof keyring.key !== "function") {
    issue(path, "INVALID_KEYRING", "must be { primaryKeyId, key(id) } with key(id) resolving to 32 bytes");
    return null;
  }
  if (typeof keyring.primaryKeyId !== "string" || !KEY_ID.test(keyring.primaryKeyId)) {
    issue(`${path}.primaryKeyId`, "INVALID_KEY_ID", ID_RULE);
    return null;
  }
  return keyring as Keyring;
}

function parseKeys(raw: unknown, path: string, issue: Issue): Keyring | null {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_KEYS) {
    issue(
      path,
      "INVALID_ENCRYPTION_KEY",
      `must list 1 to ${MAX_KEYS} keys, the one that encrypts first: [{ id: "2026-01", key }] with ${HOW}`,
    );
    return null;
  }
  const keys = new Map<string, Uint8Array>();
  const ids = new Set<string>();
  let valid = true;
  raw.forEach((entry: unknown, i) => {
    const at = `${path}[${i}]`;
    const { id, key } = (typeof entry === "object" && entry !== null ? entry : {}) as Record<string, unknown>;
    if (typeof id !== "string" || !KEY_ID.test(id)) {
      issue(`${at}.id`, "INVALID_KEY_ID", ID_RULE);
      valid = false;
    } else if (ids.has(id)) {
      issue(`${at}.id`, "DUPLICATE_KEY_ID", `"${id}" is listed twice: every key needs an id of its own`);
      valid = false;
    } else ids.add(id);
    const bytes = keyBytes(key);
    if (bytes === null) {
      issue(`${at}.key`, "INVALID_ENCRYPTION_KEY", `must be ${HOW}`);
      valid = false;
    } else if (typeof id === "string") keys.set(id, bytes);
  });
  if (!valid) return null;
  const primaryKeyId = (raw[0] as EncryptionKey).id;
  return {
    primaryKeyId,
    key: async (id) => {
      const bytes = keys.get(id);
      if (bytes === undefined) throw new Error(`no key "${id}" in outbound.credentials.keys`);
      return bytes;
    },
  };
}

/** The 32 bytes of a key given as bytes or base64 (standard or URL alphabet), or null. */
function keyBytes(key: unknown): Uint8Array | null {
  if (key instanceof Uint8Array) return key.length === KEY_BYTES ? Uint8Array.from(key) : null;
  if (typeof key !== "string" || !BASE64_KEY.test(key.trim())) return null;
  const bytes = Buffer.from(key.trim().replaceAll("-", "+").replaceAll("_", "/"), "base64");
  return bytes.length === KEY_BYTES ? new Uint8Array(bytes) : null;
}
