import type { AppContext } from "../../context.ts";
import type { SignatureStatus } from "../../core/signature-status.ts";
import type { Sql } from "../../db/sql.ts";
import { describeError } from "../../log.ts";
import { fetchManifest } from "./fetch.ts";
import { recordFailedRefresh, storeRefreshedManifest, validManifestOf } from "./records.ts";
import { verifyDetachedJws } from "./signatures.ts";

export { checkManifestClaim, manifestClaimInstructions } from "./domain-claim.ts";
export { findManifest, manifestOnWire, removeManifest, storeManifest } from "./records.ts";
export { signatureHeader } from "./signatures.ts";

/** Manifests refreshed per run at most, so one run stays short. */
const refreshBatch = 50;
/** How long a manifest whose refresh failed waits before it is tried again. */
const failedRefreshRetryMs = 15 * 60 * 1000;

/**
 * Refetches the manifests whose cache time has passed at `now` (the job's tick),
 * each fetch outside any transaction. One whose outcome cannot be stored is
 * logged, recorded invalid (its keys drop) and tried again later, behind the
 * others. Returns how many were refetched.
 */
export async function refreshDueManifests(
  ctx: Pick<AppContext, "sql" | "domainProbe" | "log">,
  now: Date,
): Promise<number> {
  const due = await ctx.sql<{ org_id: string; url: string; fetched_at: Date }[]>`
    SELECT org_id, url, fetched_at FROM participant_manifests WHERE refresh_at <= ${now}
    ORDER BY refresh_at LIMIT ${refreshBatch}`;
  for (const { org_id, url, fetched_at } of due) {
    const read = { orgId: org_id, url, fetchedAt: fetched_at };
    try {
      await storeRefreshedManifest(ctx.sql, read, await fetchManifest(ctx.domainProbe, url), now);
    } catch (error) {
      ctx.log.warn("manifest refresh could not be stored; unverified until tried again", {
        org_id,
        url,
        ...describeError(error),
      });
      await recordFailedRefresh(ctx.sql, read, new Date(now.getTime() + failedRefreshRetryMs));
    }
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
