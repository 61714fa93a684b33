import type { AppContext } from "../../context.ts";
import { isWithinDomain } from "../../core/hosts.ts";
import { fetchManifest } from "./fetch.ts";
import { manifestPath } from "./model.ts";
import { findManifest, storeRefreshedManifest } from "./records.ts";
import { verifyDetachedJws } from "./signatures.ts";
import { manifestClaims } from "./validate.ts";

/** What an owner does to verify `domain` through its manifest (shown beside the DNS and file instructions). */
export function manifestClaimInstructions(domain: string, challenge: string) {
  return {
    manifest_url: `https://${domain}${manifestPath}`,
    domains_entry: domain,
    sign: challenge,
  };
}

/**
 * Null when the organisation proves `domain` through its participant manifest;
 * otherwise why not. The manifest is fetched afresh and stored as a refresh
 * stores it: only over the registration it read. Three things must hold: it is
 * served at the root of `domain` or of a parent of it, which only who runs that
 * web server can do; its `domains` names `domain` (8.6); and `signature`, a
 * detached EdDSA JWS over the challenge, checks out under one of its keys. The
 * signature is what ties the proof to this organisation: anyone may register the
 * URL of someone else's manifest, but only the holder of its private keys can
 * sign.
 */
export async function checkManifestClaim(
  ctx: Pick<AppContext, "sql" | "domainProbe">,
  orgId: string,
  domain: string,
  challenge: string,
  signature: string | undefined,
): Promise<string | null> {
  if (!signature) return "method manifest needs signature: a detached JWS over the challenge by a key of the manifest";
  const registered = await findManifest(ctx.sql, orgId);
  if (!registered) return "the organisation has registered no manifest (PUT /api/v1/identity/manifest)";
  const now = new Date();
  const fetched = await fetchManifest(ctx.domainProbe, registered.url);
  const read = { orgId, url: registered.url, fetchedAt: registered.fetched_at };
  // A manifest removed or replaced during the fetch (its keys perhaps no longer
  // trusted) is neither brought back nor allowed to prove anything.
  if (!(await storeRefreshedManifest(ctx.sql, read, fetched, now))) {
    return "the organisation's manifest was removed, registered anew or refetched while it was fetched; try again";
  }
  if (fetched.status !== "valid") return `the manifest at ${registered.url} is ${fetched.status}: ${fetched.reason}`;
  const host = new URL(registered.url).hostname.toLowerCase();
  if (!isWithinDomain(domain, host))
    return `the manifest is served by ${host}, which is neither ${domain} nor a parent of it`;
  if (!manifestClaims(fetched.manifest, domain)) {
    return `the manifest's domains do not name ${domain}`;
  }
  const status = await verifyDetachedJws(
    signature.trim(),
    new TextEncoder().encode(challenge),
    fetched.manifest.keys ?? [],
    now,
  );
  return status === "verified" ? null : `the signature over the challenge is ${status.replace("_", " ")}`;
}
