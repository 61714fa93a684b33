import type { AppContext } from "../../context.ts";
import type { SignatureStatus } from "../../core/signature-status.ts";
import type { Sql } from "../../db/sql.ts";
import { fetchManifest } from "./fetch.ts";
import { storeManifest, validManifestOf } from "./records.ts";
import { verifyDetachedJws } from "./signatures.ts";

export { checkManifestClaim, manifestClaimInstructions } from "./domain-claim.ts";
export { findManifest, manifestOnWire, removeManifest, storeManifest } from "./records.ts";
export { signatureHeader } from "./signatures.ts";
export { manifestClaims } from "./validate.ts";

/** Manifests refreshed per run at most, so one run stays short. */
const refreshBatch = 50;

/**
 * Refetches the manifests whose cache time has passed at `now` (the job's tick),
 * each fetch outside any transaction. Returns how many were refetched.
 */
export async function refreshDueManifests(ctx: Pick<AppContext, "sql" | "domainProbe">, now: Date): Promise<number> {
  const due = await ctx.sql<{ org_id: string; url: string }[]>`
    SELECT org_id, url FROM participant_manifests WHERE refresh_at <= ${now}
    ORDER BY refresh_at LIMIT ${refreshBatch}`;
  for (const { org_id, url } of due) {
    await storeManifest(ctx.sql, org_id, url, await fetchManifest(ctx.domainProbe, url), now);
  }
  return due.length;
}

/**
 * The signature status of a request's body: `jws` is the signature header (null
 * when absent), checked against the reporter's valid manifest. Costs one query,
 * only when the request is signed.
 */
export async function signatureStatusOf(
  sql: Sql,
  orgId: string,
  jws: string | null,
  body: Uint8Array | undefined,
  now: Date,
): Promise<SignatureStatus> {
  if (jws === null || body === undefined) return "unverified";
  const manifest = await validManifestOf(sql, orgId);
  if (!manifest) return "unverified";
  return verifyDetachedJws(jws.trim(), body, manifest.keys ?? [], now);
}
