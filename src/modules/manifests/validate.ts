import { Value } from "@sinclair/typebox/value";
import { isHostName, isWithinDomain } from "../../core/hosts.ts";
import { unsafeJsonValues } from "../../core/storable-json.ts";
import { parseDateTime } from "../../core/wire-values.ts";
import { manifestPath, ParticipantManifest } from "./model.ts";
import { ed25519KeyBytes } from "./multibase.ts";

/** How deep a manifest may nest; the standard's manifests are a few levels deep. */
const manifestMaxDepth = 32;

/**
 * Checks a fetched manifest document as standard 8.7 requires: invalid JSON or a
 * schema failure, duplicate `keys[].id`, a `domains` entry that is not a host name
 * or lies outside the manifest's host (8.6) or `domains` on a path-prefixed
 * manifest reject it. We also reject a key whose `publicKey` is not a multibase
 * Ed25519 key, so every stored key verifies, and one whose `expires` is not a
 * date-time as ingest reads them, so every expiry reads.
 */
export function validateManifest(url: URL, text: string): { manifest: ParticipantManifest } | { reason: string } {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return { reason: "the manifest is not valid JSON" };
  }
  // Members the schema leaves open are kept too: what jsonb cannot hold is refused here, not by the database.
  const [unstorable] = unsafeJsonValues(document, manifestMaxDepth);
  if (unstorable)
    return { reason: `the manifest holds a value that cannot be stored at ${unstorable.path}: ${unstorable.message}` };
  const schemaError = Value.Errors(ParticipantManifest, document).First();
  if (schemaError) {
    return {
      reason: `the manifest breaks the standard's schema at ${schemaError.path || "/"}: ${schemaError.message}`,
    };
  }
  const manifest = document as ParticipantManifest;
  const keyIds = new Set<string>();
  for (const [index, key] of (manifest.keys ?? []).entries()) {
    if (keyIds.has(key.id)) return { reason: `keys/${index}: duplicate key id "${key.id}" (8.7)` };
    keyIds.add(key.id);
    const decoded = ed25519KeyBytes(key.publicKey);
    if ("reason" in decoded) return { reason: `keys/${index}: publicKey ${decoded.reason} (8.4)` };
    if (key.expires !== undefined) {
      // The schema's date-time takes a leap second, which ingest refuses and Date cannot read.
      const expiry = parseDateTime(key.expires);
      if ("reason" in expiry) return { reason: `keys/${index}: expires ${expiry.reason} (8.4)` };
    }
  }
  // Another port or a deeper path is open to more people than the host's own web
  // server, and a manifest's domains prove them (domain-claim.ts).
  if (manifest.domains && (url.pathname !== manifestPath || url.port !== "")) {
    return {
      reason: `domains may appear only on a manifest served at the domain root, https://${url.hostname}${manifestPath} (8.6)`,
    };
  }
  const host = url.hostname.toLowerCase();
  for (const [index, entry] of (manifest.domains ?? []).entries()) {
    const claimed = entry.toLowerCase().replace(/^\*\./, "");
    // A suffix match alone would take "evil.example/.host" or "*.*.host" as within the host.
    if (!isHostName(claimed)) {
      return { reason: `domains/${index}: "${entry}" is not a host name, or "*." and a host name (8.6)` };
    }
    if (!isWithinDomain(claimed, host)) {
      return { reason: `domains/${index}: "${entry}" is neither ${host} nor a subdomain of it (8.6)` };
    }
  }
  return { manifest };
}

/** True when `domain` is one of the manifest's `domains`, literally or under a `*.` wildcard (8.6). */
export function manifestClaims(manifest: ParticipantManifest, domain: string): boolean {
  return (manifest.domains ?? []).some((entry) => {
    const lower = entry.toLowerCase();
    return lower.startsWith("*.") ? domain.endsWith(lower.slice(1)) : lower === domain;
  });
}

/** Why a manifest URL cannot be registered, or null. */
export function manifestUrlProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "is not an absolute URL";
  }
  if (parsed.protocol !== "https:") return "must be https (8.1)";
  if (parsed.username || parsed.password) return "must not carry credentials";
  if (!parsed.pathname.endsWith(manifestPath)) return `must end in ${manifestPath} (8.1)`;
  if (parsed.search || parsed.hash) return "must have no query or fragment";
  return null;
}
