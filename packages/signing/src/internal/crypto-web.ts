/**
 * `#crypto` everywhere else (Cloudflare Workers, Vercel Edge, browsers): Web Crypto only, no
 * `node:` import and no `Buffer`. Web Crypto is asynchronous, so the `*Sync` functions throw
 * SYNC_CRYPTO_UNAVAILABLE and verifiers take their `verifyAsync` path. Keys are imported on first
 * use and the promise is kept on the key, so a verifier imports each key once, not per request.
 * See crypto.ts for the contract.
 */
import { SyncCryptoUnavailableError } from "../errors.js";
import { decodeBase64Strict, encodeBase64 } from "./base64.js";
import { concatBytes, encodeHex, encodeUtf8, sameBytes } from "./bytes.js";
import type {
  DigestEncoding,
  Ed25519PrivateKey,
  Ed25519PublicKey,
  HmacHash,
  HmacKey,
  SignedParts,
} from "./crypto.js";

// Named through the API, so this file needs no DOM typings to compile.
type CryptoKey = Awaited<ReturnType<typeof globalThis.crypto.subtle.importKey>>;

interface WebHmacKey {
  secret: Uint8Array;
  imported: { [hash in HmacHash]?: Promise<CryptoKey> };
}
interface WebPublicKey {
  load(): Promise<CryptoKey>;
  imported?: Promise<CryptoKey>;
}
interface WebPrivateKey {
  seed: Uint8Array;
}

const HASH = { sha1: "SHA-1", sha256: "SHA-256" } as const;
const ED25519 = { name: "Ed25519" } as const;
// The DER header that turns a 32-byte seed into PKCS#8 (RFC 8410): Web Crypto imports no raw seeds.
const PKCS8_PREFIX = new Uint8Array([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
]);

// Read at call time, not at import: importing the package must never fail.
const subtle = () => globalThis.crypto.subtle;
const web = <T>(key: HmacKey | Ed25519PublicKey | Ed25519PrivateKey) => key as unknown as T;

/** No `*Sync` function works here. */
export const syncCrypto = false;

/** Web Crypto is asynchronous: the async path is the Web Crypto one. */
export function asyncPath<Request, Result>(
  _verify: (request: Request, now: number) => Result,
  viaWebCrypto: (request: Request, now: number) => Promise<Result>,
): (request: Request, now: number) => Promise<Result> {
  return viaWebCrypto;
}

/** Always throws: there is no synchronous crypto here. */
export function requireSyncCrypto(api: string): void {
  throw new SyncCryptoUnavailableError(api);
}

/** Keeps the bytes; the CryptoKey is imported per hash on first use. */
export function hmacKey(secret: Uint8Array): HmacKey {
  const key: WebHmacKey = { secret, imported: {} };
  return key as unknown as HmacKey;
}

/** Unavailable: throws SYNC_CRYPTO_UNAVAILABLE. */
export function hmacSync(): string {
  throw new SyncCryptoUnavailableError("This call");
}

/** The HMAC of the parts (joined: Web Crypto signs one buffer), as encoded text bytes. */
export async function hmac(
  key: HmacKey,
  hash: HmacHash,
  encoding: DigestEncoding,
  parts: SignedParts,
): Promise<string> {
  const native = web<WebHmacKey>(key);
  native.imported[hash] ??= subtle().importKey(
    "raw",
    native.secret,
    { name: "HMAC", hash: HASH[hash] },
    false,
    ["sign"],
  );
  const digest = new Uint8Array(await subtle().sign("HMAC", await native.imported[hash], concatBytes(parts)));
  return encoding === "hex" ? encodeHex(digest) : encodeBase64(digest);
}

/** Unavailable: throws SYNC_CRYPTO_UNAVAILABLE. */
export function sha256HexSync(): string {
  throw new SyncCryptoUnavailableError("This call");
}

/** Lower-case hex SHA-256. */
export async function sha256Hex(data: Uint8Array): Promise<string> {
  return encodeHex(new Uint8Array(await subtle().digest("SHA-256", data)));
}

/** Keeps the raw bytes; imported on first verification. */
export function ed25519PublicKey(raw: Uint8Array): Ed25519PublicKey {
  const key: WebPublicKey = { load: () => importPublicKey(raw) };
  return key as unknown as Ed25519PublicKey;
}

/** Keeps the seed. */
export function ed25519PrivateKey(seed: Uint8Array): Ed25519PrivateKey {
  const key: WebPrivateKey = { seed };
  return key as unknown as Ed25519PrivateKey;
}

/**
 * Derives the public key on first verification: Web Crypto has no synchronous derivation, so a
 * 64-byte whsk_ key whose halves disagree is refused by `verifyAsync`, not by `createVerifier`.
 */
export function ed25519PublicKeyOf(
  key: Ed25519PrivateKey,
  claimed: Uint8Array | undefined,
  mismatch: () => Error,
): Ed25519PublicKey {
  const { seed } = web<WebPrivateKey>(key);
  const derived: WebPublicKey = {
    async load() {
      const raw = await derivePublicKey(seed);
      if (claimed !== undefined && !sameBytes(raw, claimed)) throw mismatch();
      return importPublicKey(raw);
    },
  };
  return derived as unknown as Ed25519PublicKey;
}

/** Unavailable: throws SYNC_CRYPTO_UNAVAILABLE. */
export function ed25519RawPublicKeySync(): Uint8Array {
  throw new SyncCryptoUnavailableError("This call");
}

/** Unavailable: throws SYNC_CRYPTO_UNAVAILABLE. */
export function ed25519VerifySync(): boolean {
  throw new SyncCryptoUnavailableError("This call");
}

/** Ed25519 verification of the whole content, importing the key on first use. */
export async function ed25519Verify(
  key: Ed25519PublicKey,
  content: Uint8Array,
  signature: Uint8Array,
): Promise<boolean> {
  const native = web<WebPublicKey>(key);
  native.imported ??= native.load();
  return subtle().verify(ED25519, await native.imported, signature, content);
}

/** Unavailable: throws SYNC_CRYPTO_UNAVAILABLE. */
export function ed25519SignSync(): string {
  throw new SyncCryptoUnavailableError("This call");
}

/** `TextEncoder`. */
export const utf8: (text: string) => Uint8Array = encodeUtf8;

/**
 * Compares every byte of `a` (the expected value, whose length is public) whatever `b` is: the
 * differences are OR-ed together and a length mismatch folded in, with no early return.
 */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  let difference = a.byteLength ^ b.byteLength;
  for (let index = 0; index < a.byteLength; index++) difference |= a[index]! ^ (b[index] ?? 0);
  return difference === 0;
}

function importPublicKey(raw: Uint8Array): Promise<CryptoKey> {
  return subtle().importKey("raw", raw, ED25519, false, ["verify"]);
}

/** Imports the seed as PKCS#8 and reads the public half back as the JWK's `x` (base64url). */
async function derivePublicKey(seed: Uint8Array): Promise<Uint8Array> {
  const privateKey = await subtle().importKey("pkcs8", concatBytes([PKCS8_PREFIX, seed]), ED25519, true, [
    "sign",
  ]);
  const { x } = await subtle().exportKey("jwk", privateKey);
  const raw = x === undefined ? undefined : decodeBase64Strict(x.replace(/-/g, "+").replace(/_/g, "/"));
  if (raw === undefined) throw new Error("Web Crypto exported an Ed25519 JWK without a valid x.");
  return raw;
}
