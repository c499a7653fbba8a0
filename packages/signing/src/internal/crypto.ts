/**
 * The crypto primitives signing and verification need, implemented twice: `crypto-node.ts` over
 * `node:crypto` (synchronous, Node's speed) and `crypto-web.ts` over Web Crypto (asynchronous, every
 * runtime). Code imports them from `#crypto`, which package.json's `imports` map resolves to one or
 * the other by export condition (`node` or `default`). Types only: both files must satisfy
 * `CryptoModule` (checked in crypto.test.ts).
 */

/** The hash of an HMAC: SHA-256 everywhere, SHA-1 only for Twilio's auth-token signatures. */
export type HmacHash = "sha1" | "sha256";
/** How a provider writes a digest in its header. */
export type DigestEncoding = "hex" | "base64";
/** The signed content in pieces, hashed in order; text is hashed as its UTF-8 bytes. */
export type SignedParts = readonly (string | Uint8Array)[];

declare const opaque: unique symbol;
/** An HMAC secret decoded once. Web Crypto keeps its imported `CryptoKey`s on it (one per hash). */
export interface HmacKey {
  readonly [opaque]: "HmacKey";
}
/** An Ed25519 public key decoded once. Web Crypto imports it on first use and keeps the promise. */
export interface Ed25519PublicKey {
  readonly [opaque]: "Ed25519PublicKey";
}
/** An Ed25519 private key (its 32-byte seed) decoded once. */
export interface Ed25519PrivateKey {
  readonly [opaque]: "Ed25519PrivateKey";
}

/** What `#crypto` exports, in both variants. The `*Sync` functions throw SYNC_CRYPTO_UNAVAILABLE on the web. */
export interface CryptoModule {
  /** Whether the `*Sync` functions work (node:crypto): then the gate verifies synchronously, as before. */
  readonly syncCrypto: boolean;
  /**
   * A verifier's `verifyAsync`: on node:crypto its synchronous `verify` (the same work, nothing
   * awaited inside), elsewhere `viaWebCrypto`. Both paths share their parsing, so their errors agree.
   */
  asyncPath<Request, Result>(
    verify: (request: Request, now: number) => Result,
    viaWebCrypto: (request: Request, now: number) => Promise<Result>,
  ): (request: Request, now: number) => Promise<Result>;
  /** Throws `SyncCryptoUnavailableError` naming `api` where there is no synchronous crypto. */
  requireSyncCrypto(api: string): void;
  hmacKey(secret: Uint8Array): HmacKey;
  /** The HMAC of `parts`, as `encoding` text (what senders put in their headers). */
  hmacSync(key: HmacKey, hash: HmacHash, encoding: DigestEncoding, parts: SignedParts): string;
  hmac(key: HmacKey, hash: HmacHash, encoding: DigestEncoding, parts: SignedParts): Promise<string>;
  /** Lower-case hex SHA-256 of `data` (Twilio's `bodySHA256`). */
  sha256HexSync(data: Uint8Array): string;
  sha256Hex(data: Uint8Array): Promise<string>;
  /** Wraps 32 raw public-key bytes; the caller has checked the length. */
  ed25519PublicKey(raw: Uint8Array): Ed25519PublicKey;
  /** Wraps a 32-byte seed; the caller has checked the length. */
  ed25519PrivateKey(seed: Uint8Array): Ed25519PrivateKey;
  /**
   * The public key of `key`. When `claimed` is given (the 64-byte whsk_ form carries the public
   * half), it must equal the derived key, else `mismatch()` is thrown: at once on Node; on the web,
   * where deriving is asynchronous, by the first verification.
   */
  ed25519PublicKeyOf(
    key: Ed25519PrivateKey,
    claimed: Uint8Array | undefined,
    mismatch: () => Error,
  ): Ed25519PublicKey;
  /** The 32 raw bytes of the public key of `key`. */
  ed25519RawPublicKeySync(key: Ed25519PrivateKey): Uint8Array;
  ed25519VerifySync(key: Ed25519PublicKey, content: Uint8Array, signature: Uint8Array): boolean;
  ed25519Verify(key: Ed25519PublicKey, content: Uint8Array, signature: Uint8Array): Promise<boolean>;
  /** The 64-byte Ed25519 signature of `content`, in base64 (as a `v1a` entry carries it). */
  ed25519SignSync(key: Ed25519PrivateKey, content: Uint8Array): string;
  /**
   * A string's UTF-8 bytes. Here rather than beside the other byte helpers because Node's `Buffer`
   * encodes a signature-sized string several times faster than `TextEncoder`, on every request.
   */
  utf8(text: string): Uint8Array;
  /** Equal bytes, in time that depends only on the lengths; different lengths are simply unequal. */
  timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean;
}
