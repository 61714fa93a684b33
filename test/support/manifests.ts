import { CompactSign } from "jose";
import { manifestPath } from "../../src/modules/manifests/model.ts";
import { publishFile } from "./domain-probe.ts";

const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** base58btc, for writing test keys the way manifests carry them. */
function encodeBase58btc(bytes: Uint8Array): string {
  let value = BigInt(`0x${Buffer.from(bytes).toString("hex") || "0"}`);
  let text = "";
  for (; value > 0n; value /= 58n) text = alphabet[Number(value % 58n)] + text;
  for (const byte of bytes) {
    if (byte !== 0) break;
    text = `1${text}`;
  }
  return text;
}

/** A signing key generated for one test, and its manifest entry. */
export async function signingKey(id: string, expires?: string) {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
    "sign",
    "verify",
  ])) as unknown as CryptoKeyPair;
  const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  const publicKey = `z${encodeBase58btc(Uint8Array.from([0xed, 0x01, ...raw]))}`;
  return {
    entry: { id, type: "Ed25519", publicKey, ...(expires ? { expires } : {}) },
    /** The detached compact JWS over `body` that the signature header carries. */
    async sign(body: string, kid = id): Promise<string> {
      const jws = await new CompactSign(new TextEncoder().encode(body))
        .setProtectedHeader({ alg: "EdDSA", kid })
        .sign(pair.privateKey);
      const [header, , signature] = jws.split(".");
      return `${header}..${signature}`;
    },
  };
}

/** Serves a manifest document at https://{host}/.well-known/content-telemetry.json on the local test web. */
export function serveManifest(host: string, document: unknown, headers: Record<string, string> = {}): string {
  publishFile(host, manifestPath, {
    body: typeof document === "string" ? document : JSON.stringify(document),
    headers,
  });
  return `https://${host}${manifestPath}`;
}

/** A valid v1 manifest for `host`. */
export function manifestFor(host: string, extra: Record<string, unknown> = {}) {
  return {
    schema_version: "1.0",
    id: `https://${host}${manifestPath}`,
    roles: ["agent"],
    operator: { name: "Test operator" },
    ...extra,
  };
}
