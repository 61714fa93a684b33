/**
 * Ed25519 public keys as manifests carry them (standard 8.4): multibase
 * base58btc (`z` prefix) of the multicodec varint 0xed 0x01 followed by the 32
 * key bytes, the same format as did:key. The decoder is these few lines rather
 * than a dependency: base58btc has one alphabet and no options.
 */
const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const digitOf = new Map([...alphabet].map((char, index) => [char, index]));

/** The bytes of a base58btc string, or null when it has a character outside the alphabet. */
export function decodeBase58btc(text: string): Uint8Array | null {
  let value = 0n;
  for (const char of text) {
    const digit = digitOf.get(char);
    if (digit === undefined) return null;
    value = value * 58n + BigInt(digit);
  }
  const bytes: number[] = [];
  for (; value > 0n; value >>= 8n) bytes.unshift(Number(value & 0xffn));
  const leadingZeros = text.length - text.replace(/^1+/, "").length;
  return Uint8Array.from([...new Array<number>(leadingZeros).fill(0), ...bytes]);
}

const ed25519Multicodec = [0xed, 0x01];

/** The 32 raw bytes of a multibase Ed25519 public key, or why it is not one. */
export function ed25519KeyBytes(publicKey: string): { bytes: Uint8Array<ArrayBuffer> } | { reason: string } {
  if (!publicKey.startsWith("z")) return { reason: "is not multibase base58btc (it must start with z)" };
  const decoded = publicKey.length <= 64 ? decodeBase58btc(publicKey.slice(1)) : null;
  if (!decoded) return { reason: "is not valid base58btc" };
  if (decoded.length !== 34 || decoded[0] !== ed25519Multicodec[0] || decoded[1] !== ed25519Multicodec[1]) {
    return { reason: "is not an Ed25519 public key (multicodec 0xed01 and 32 bytes)" };
  }
  return { bytes: Uint8Array.from(decoded.subarray(2)) };
}
