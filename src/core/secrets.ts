import { timingSafeEqual } from "node:crypto";

/**
 * The one way the service makes and checks secrets it hands out (API keys,
 * session tokens, sign-in links, click tokens): 32 random bytes, base64url,
 * behind a readable prefix; only a SHA-256 is stored, compared in constant time.
 */

export function sha256(value: string): Uint8Array {
  return new Bun.CryptoHasher("sha256").update(value).digest() as Uint8Array;
}

/** 32 random bytes as 43 base64url characters: unguessable (256 bits). */
export function randomToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

/** A fresh secret, `prefix` + a random token, and the SHA-256 that is all the service stores of it. */
export function mintSecret(prefix: string): { raw: string; hash: Uint8Array } {
  const raw = `${prefix}${randomToken()}`;
  return { raw, hash: sha256(raw) };
}

const secretBody = /^[A-Za-z0-9_-]{43}$/;

/** The stored hash of a presented secret, or null when it cannot be one minted with `prefix` (no lookup needed). */
export function hashPresentedSecret(raw: string | undefined | null, prefix: string): Uint8Array | null {
  return raw?.startsWith(prefix) && secretBody.test(raw.slice(prefix.length)) ? sha256(raw) : null;
}

export function sameHash(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && timingSafeEqual(a, b);
}
