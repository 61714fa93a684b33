import { compactVerify, decodeProtectedHeader } from "jose";
import type { SignatureStatus } from "../../core/signature-status.ts";
import { parseDateTime } from "../../core/wire-values.ts";
import type { ManifestKey } from "./model.ts";
import { ed25519KeyBytes } from "./multibase.ts";

/**
 * Signed telemetry: a request to POST /events or /sessions/bulk may carry this
 * header, a compact JWS with a detached payload (RFC 7515 appendix F:
 * `<protected header>..<signature>`) over the exact bytes of the request body,
 * protected header `{"alg":"EdDSA","kid":"<id of a key in the reporter's manifest>"}`.
 * The standard names the keys (8.4) but no signature format; this is ours.
 */
export const signatureHeader = "content-telemetry-signature";

const maxSignatureLength = 4096;

/** Checks a detached JWS over `body` against a manifest's keys at `now`. */
export async function verifyDetachedJws(
  jws: string,
  body: Uint8Array,
  keys: readonly ManifestKey[],
  now: Date,
): Promise<SignatureStatus> {
  const parts = jws.length <= maxSignatureLength ? jws.split(".") : [];
  if (parts.length !== 3 || parts[1] !== "") return "invalid";
  let kid: unknown;
  try {
    kid = decodeProtectedHeader(jws).kid;
  } catch {
    return "invalid";
  }
  const key = keys.find((candidate) => candidate.id === kid);
  if (!key) return "unknown_key";
  if (key.expires !== undefined) {
    // An expiry that cannot be read (stored before validation refused it) is not known to lie ahead.
    const expiry = parseDateTime(key.expires);
    if ("reason" in expiry || expiry.ms <= now.getTime()) return "expired_key";
  }
  const decoded = ed25519KeyBytes(key.publicKey);
  if ("reason" in decoded) return "invalid";
  try {
    const publicKey = await crypto.subtle.importKey("raw", decoded.bytes, { name: "Ed25519" }, false, ["verify"]);
    const attached = `${parts[0]}.${Buffer.from(body).toString("base64url")}.${parts[2]}`;
    await compactVerify(attached, publicKey, { algorithms: ["EdDSA", "Ed25519"] });
    return "verified";
  } catch {
    return "invalid";
  }
}
