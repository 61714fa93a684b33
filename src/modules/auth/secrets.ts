import { sha256 } from "../keys/key-format.ts";

/** A fresh opaque secret (`prefix` + 32 random bytes, base64url) and the SHA-256 that is all we store. */
export function mintSecret(prefix: string): { raw: string; hash: Uint8Array } {
  const raw = `${prefix}${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url")}`;
  return { raw, hash: sha256(raw) };
}

const secretPattern = /^[a-z]+_[A-Za-z0-9_-]{43}$/;

/** The stored hash of a presented secret, or null when it cannot be one of ours (no lookup needed). */
export function hashPresentedSecret(raw: string | undefined | null, prefix: string): Uint8Array | null {
  return raw?.startsWith(prefix) && secretPattern.test(raw) ? sha256(raw) : null;
}
