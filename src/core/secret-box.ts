import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/**
 * Encryption at rest for secrets the service must use again, not just recognise
 * (webhook signing secrets: a hash cannot sign). AES-256-GCM with a fresh 96-bit
 * nonce per value; the associated data binds a value to the row it belongs to, so
 * a ciphertext copied onto another row does not open.
 *
 * Layout: version byte (1) · nonce (12) · ciphertext · tag (16).
 */
export class SecretBox {
  static readonly keyBytes = 32;
  /** A short fingerprint of the key, stored beside each value: which key opens it, never the key itself. */
  readonly keyId: string;
  readonly #key: Buffer;

  constructor(key: Uint8Array) {
    if (key.byteLength !== SecretBox.keyBytes) throw new Error(`a SecretBox key is ${SecretBox.keyBytes} bytes`);
    this.#key = Buffer.from(key);
    this.keyId = createHash("sha256").update("secret-box key id\u0000").update(this.#key).digest("hex").slice(0, 16);
  }

  seal(plaintext: string, associatedData: string): Uint8Array {
    const nonce = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.#key, nonce);
    cipher.setAAD(Buffer.from(associatedData, "utf8"));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return Buffer.concat([Buffer.of(1), nonce, body, cipher.getAuthTag()]);
  }

  /** The plaintext; throws when the value was sealed under another key, for another row, or altered. */
  open(sealed: Uint8Array, associatedData: string): string {
    const bytes = Buffer.from(sealed);
    if (bytes.byteLength < 1 + 12 + 16 || bytes[0] !== 1) throw new Error("not a sealed value");
    const decipher = createDecipheriv("aes-256-gcm", this.#key, bytes.subarray(1, 13));
    decipher.setAAD(Buffer.from(associatedData, "utf8"));
    decipher.setAuthTag(bytes.subarray(bytes.byteLength - 16));
    return Buffer.concat([decipher.update(bytes.subarray(13, bytes.byteLength - 16)), decipher.final()]).toString(
      "utf8",
    );
  }
}

/** A key given as base64 or base64url text, or null when it does not decode to exactly 32 bytes. */
export function decodeSecretBoxKey(text: string): Uint8Array | null {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) return null;
  const bytes = Buffer.from(trimmed.replace(/-/g, "+").replace(/_/g, "/"), "base64");
  return bytes.byteLength === SecretBox.keyBytes ? new Uint8Array(bytes) : null;
}
