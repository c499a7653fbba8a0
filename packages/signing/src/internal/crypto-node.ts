/**
 * `#crypto` under the `node` condition (Node, and Deno and Bun, which emulate node:crypto): the
 * synchronous primitives verification has always used, so the sync API keeps its speed and the
 * async one adds no crypto work. See crypto.ts for the contract.
 */
import {
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  type KeyObject,
  timingSafeEqual as nodeTimingSafeEqual,
  sign,
  verify,
} from "node:crypto";
import type {
  DigestEncoding,
  Ed25519PrivateKey,
  Ed25519PublicKey,
  HmacHash,
  HmacKey,
  SignedParts,
} from "./crypto.js";

// DER headers that turn raw 32-byte Ed25519 material into PKCS#8 / SPKI, so node:crypto can import
// a seed or public key without a JWK round trip (RFC 8410).
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

// The opaque key types are the native values themselves: no wrapper on the hot path.
const secretOf = (key: HmacKey) => key as unknown as Uint8Array;
const keyObject = (key: Ed25519PublicKey | Ed25519PrivateKey) => key as unknown as KeyObject;

/** Every `*Sync` function works here. */
export const syncCrypto = true;

/** node:crypto answers at once, so the async path is the sync one: no extra crypto work. */
export function asyncPath<Request, Result>(
  verify: (request: Request, now: number) => Result,
  _viaWebCrypto: (request: Request, now: number) => Promise<Result>,
): (request: Request, now: number) => Promise<Result> {
  return async (request, now) => verify(request, now);
}

/** Nothing to refuse: every API works here. */
export function requireSyncCrypto(_api: string): void {}

/** The secret bytes are the key. */
export function hmacKey(secret: Uint8Array): HmacKey {
  return secret as unknown as HmacKey;
}

/** Streams the parts through one HMAC; no copy of the body. */
export function hmacSync(key: HmacKey, hash: HmacHash, encoding: DigestEncoding, parts: SignedParts): string {
  const hmac = createHmac(hash, secretOf(key));
  for (const part of parts) hmac.update(part);
  return hmac.digest(encoding);
}

/** `hmacSync`, as a promise. */
export async function hmac(
  key: HmacKey,
  hash: HmacHash,
  encoding: DigestEncoding,
  parts: SignedParts,
): Promise<string> {
  return hmacSync(key, hash, encoding, parts);
}

/** Lower-case hex SHA-256. */
export function sha256HexSync(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** `sha256HexSync`, as a promise. */
export async function sha256Hex(data: Uint8Array): Promise<string> {
  return sha256HexSync(data);
}

/** Imports 32 raw bytes as an SPKI public key. */
export function ed25519PublicKey(raw: Uint8Array): Ed25519PublicKey {
  const key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: "der", type: "spki" });
  return key as unknown as Ed25519PublicKey;
}

/** Imports a 32-byte seed as a PKCS#8 private key. */
export function ed25519PrivateKey(seed: Uint8Array): Ed25519PrivateKey {
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" });
  return key as unknown as Ed25519PrivateKey;
}

/** Derives the public key now, and checks a claimed one now. */
export function ed25519PublicKeyOf(
  key: Ed25519PrivateKey,
  claimed: Uint8Array | undefined,
  mismatch: () => Error,
): Ed25519PublicKey {
  const publicKey = createPublicKey(keyObject(key));
  if (claimed !== undefined && !rawPublicKey(publicKey).equals(claimed)) throw mismatch();
  return publicKey as unknown as Ed25519PublicKey;
}

/** The raw 32 bytes of the public half. */
export function ed25519RawPublicKeySync(key: Ed25519PrivateKey): Uint8Array {
  return rawPublicKey(createPublicKey(keyObject(key)));
}

/** Ed25519 verification of the whole content. */
export function ed25519VerifySync(
  key: Ed25519PublicKey,
  content: Uint8Array,
  signature: Uint8Array,
): boolean {
  return verify(null, content, keyObject(key), signature);
}

/** `ed25519VerifySync`, as a promise. */
export async function ed25519Verify(
  key: Ed25519PublicKey,
  content: Uint8Array,
  signature: Uint8Array,
): Promise<boolean> {
  return ed25519VerifySync(key, content, signature);
}

/** The Ed25519 signature of the content, in base64. */
export function ed25519SignSync(key: Ed25519PrivateKey, content: Uint8Array): string {
  return sign(null, content, keyObject(key)).toString("base64");
}

/** `Buffer.from`: several times faster than `TextEncoder` for a signature-sized string. */
export function utf8(text: string): Uint8Array {
  return Buffer.from(text);
}

/** node:crypto's comparison, which throws on different lengths; those are simply unequal here. */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && nodeTimingSafeEqual(a, b);
}

function rawPublicKey(publicKey: KeyObject): Buffer {
  return publicKey.export({ format: "der", type: "spki" }).subarray(SPKI_PREFIX.length);
}
