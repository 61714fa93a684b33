// An organisation's registered participant manifest as stored (sql/052), and its wire form.
import { storableText } from "../../core/storable-json.ts";
import type { Queryable } from "../../db/sql.ts";
import type { FetchedManifest } from "./fetch.ts";
import type { ManifestStatus, ParticipantManifest } from "./model.ts";

interface ManifestRow {
  org_id: string;
  url: string;
  status: ManifestStatus;
  problem: string | null;
  document: ParticipantManifest | null;
  fetched_at: Date;
  refresh_at: Date;
}

/** An organisation's manifest as the API shows it. */
export function manifestOnWire(row: ManifestRow) {
  return {
    organization_id: row.org_id,
    url: row.url,
    status: row.status,
    problem: row.problem,
    key_ids: (row.document?.keys ?? []).map((key) => key.id),
    domains: row.document?.domains ?? [],
    fetched_at: row.fetched_at,
    refresh_at: row.refresh_at,
  };
}

/**
 * Records the outcome of fetching an organisation's manifest (sql/052). Only a
 * valid manifest keeps a document: one that has become invalid or unreachable
 * leaves the participant unverified (8.7), so its keys no longer verify anything.
 */
export async function storeManifest(
  sql: Queryable,
  orgId: string,
  url: string,
  fetched: FetchedManifest,
  now: Date,
): Promise<ManifestRow> {
  const { document, problem, refreshAt } = fetchOutcome(fetched, now);
  const [row] = await sql<ManifestRow[]>`
    INSERT INTO participant_manifests (org_id, url, status, problem, document, fetched_at, refresh_at)
    VALUES (${orgId}::uuid, ${url}, ${fetched.status}, ${problem}, ${document}::text::jsonb, ${now}, ${refreshAt})
    ON CONFLICT (org_id) DO UPDATE SET
      url = EXCLUDED.url, status = EXCLUDED.status, problem = EXCLUDED.problem, document = EXCLUDED.document,
      fetched_at = EXCLUDED.fetched_at, refresh_at = EXCLUDED.refresh_at
    RETURNING *`;
  return row as ManifestRow;
}

/** The columns a fetch sets: the document only when valid, the problem otherwise, and the next refresh. */
function fetchOutcome(fetched: FetchedManifest, now: Date) {
  return {
    document: fetched.status === "valid" ? JSON.stringify(fetched.manifest) : null,
    // A reason may quote the manifest's own text, NUL characters included.
    problem: fetched.status === "valid" ? null : storableText(fetched.reason),
    refreshAt: new Date(now.getTime() + fetched.maxAgeSeconds * 1000),
  };
}

/**
 * Records a refetch (the scheduled refresh's, or a domain claim's), only while
 * the registration is the one it read (same URL, same last fetch): a removal, a
 * new URL or another fetch made meanwhile (by the API or another instance) is not
 * overwritten. True when stored.
 * The last fetch is compared as the service wrote it, a JS Date (milliseconds):
 * every writer of fetched_at passes one, never the database's now().
 */
export async function storeRefreshedManifest(
  sql: Queryable,
  read: { orgId: string; url: string; fetchedAt: Date },
  fetched: FetchedManifest,
  now: Date,
): Promise<boolean> {
  const { document, problem, refreshAt } = fetchOutcome(fetched, now);
  const stored = await sql`
    UPDATE participant_manifests
    SET status = ${fetched.status}, problem = ${problem}, document = ${document}::text::jsonb,
        fetched_at = ${now}, refresh_at = ${refreshAt}
    WHERE org_id = ${read.orgId}::uuid AND url = ${read.url} AND fetched_at = ${read.fetchedAt}`;
  return stored.count > 0;
}

/**
 * Records a refresh whose outcome could not be stored: the participant is
 * unverified (its keys no longer verify, as after any failed refresh, 8.7) and
 * is tried again at `retryAt`, behind the others due.
 */
export async function recordFailedRefresh(
  sql: Queryable,
  read: { orgId: string; fetchedAt: Date },
  retryAt: Date,
): Promise<void> {
  await sql`
    UPDATE participant_manifests
    SET status = 'invalid', problem = 'the refreshed manifest could not be stored', document = NULL,
        refresh_at = ${retryAt}
    WHERE org_id = ${read.orgId}::uuid AND fetched_at = ${read.fetchedAt}`;
}

export async function findManifest(sql: Queryable, orgId: string): Promise<ManifestRow | undefined> {
  const [row] = await sql<ManifestRow[]>`SELECT * FROM participant_manifests WHERE org_id = ${orgId}::uuid`;
  return row;
}

export async function removeManifest(sql: Queryable, orgId: string): Promise<boolean> {
  const removed = await sql`DELETE FROM participant_manifests WHERE org_id = ${orgId}::uuid`;
  return removed.count > 0;
}

/** The organisation's manifest when its last fetch was valid. */
export async function validManifestOf(sql: Queryable, orgId: string): Promise<ParticipantManifest | undefined> {
  const row = await findManifest(sql, orgId);
  return row?.status === "valid" && row.document ? row.document : undefined;
}
