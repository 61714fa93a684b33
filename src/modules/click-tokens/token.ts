import { sha256 } from "../keys/key-format.ts";

const tokenPattern = /^ctx_[A-Za-z0-9_-]{43}$/;

/** A new click token: `ctx_` + 32 random bytes base64url (256 bits); only its hash is stored. */
export function mintClickToken(): { raw: string; hash: Uint8Array } {
  const raw = `ctx_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url")}`;
  return { raw, hash: sha256(raw) };
}

/** The stored hash of a presented token, or null when it cannot be a token at all. */
export function clickTokenHash(raw: string): Uint8Array | null {
  return tokenPattern.test(raw) ? sha256(raw) : null;
}
