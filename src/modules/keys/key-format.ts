import type { OrgType } from "../../core/organizations.ts";
import { mintSecret, sha256 } from "../../core/secrets.ts";

export const keyPrefixes = { content_owner: "svc_pub_", platform: "svc_pk_", agent: "svc_pk_" } as const;
const secretLength = 43; // 32 random bytes, base64url
const lookupLength = 12;
const keyPattern = /^(svc_pub_|svc_pk_)([A-Za-z0-9_-]{43})$/;

export interface ParsedKey {
  prefix: string;
  lookupId: string;
  hash: Uint8Array;
}

export function mintRawKey(orgType: OrgType): {
  raw: string;
  lookupId: string;
  hash: Uint8Array;
  displayPrefix: string;
} {
  const prefix = keyPrefixes[orgType];
  const { raw, hash } = mintSecret(prefix);
  const lookupId = raw.slice(prefix.length, prefix.length + lookupLength);
  return { raw, lookupId, hash, displayPrefix: `${prefix}${lookupId}` };
}

/** Splits a presented key into its non-secret lookup id and its hash; null when it cannot be a key. */
export function parseKey(raw: string | undefined | null): ParsedKey | null {
  if (!raw || raw.length > 64) return null;
  const match = keyPattern.exec(raw);
  if (!match?.[1] || match[2]?.length !== secretLength) return null;
  return { prefix: match[1], lookupId: match[2].slice(0, lookupLength), hash: sha256(raw) };
}
