import { pageWithTotal, type Sql } from "../../db/sql.ts";

/** Whose lookup it was: the token's issuer, the key that resolved it, or an owner whose content it showed. */
export type LookupRole = "issuer" | "resolver" | "owner";

export interface LookupCount {
  day: string;
  role: LookupRole;
  lookups: number;
}

/** Counts one answered lookup for each organisation in its role, on today's UTC day (sql/050). */
export async function countLookup(
  sql: Sql,
  lookup: { issuerOrgId: string; resolverOrgId: string; ownerOrgIds: readonly string[] },
): Promise<void> {
  const counted: [string, LookupRole][] = [
    [lookup.issuerOrgId, "issuer"],
    [lookup.resolverOrgId, "resolver"],
    ...lookup.ownerOrgIds.map((orgId): [string, LookupRole] => [orgId, "owner"]),
  ];
  await sql`
    INSERT INTO click_token_lookups (org_id, role, day, lookups)
    SELECT org_id, role, (now() AT TIME ZONE 'UTC')::date, 1
    FROM unnest(${counted.map(([orgId]) => orgId)}::uuid[], ${counted.map(([, role]) => role)}::text[]) AS c (org_id, role)
    ON CONFLICT (org_id, role, day) DO UPDATE SET lookups = click_token_lookups.lookups + 1`;
}

/** An organisation's lookup counts, newest day first. */
export async function listLookups(
  sql: Sql,
  orgId: string,
  page: { limit: number; offset: number },
): Promise<{ items: LookupCount[]; total: number }> {
  return pageWithTotal(
    sql,
    sql<LookupCount[]>`
    SELECT to_char(day, 'YYYY-MM-DD') AS day, role, lookups::float8 AS lookups
    FROM click_token_lookups WHERE org_id = ${orgId}::uuid
    ORDER BY day DESC, role LIMIT ${page.limit} OFFSET ${page.offset}`,
    sql`click_token_lookups WHERE org_id = ${orgId}::uuid`,
  );
}
