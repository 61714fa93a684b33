import { type PrivacyLevel, withholdConversationFields } from "../../core/privacy.ts";
import { hashPresentedSecret } from "../../core/secrets.ts";
import type { Sql } from "../../db/sql.ts";
import { clickTokenPrefix } from "./service.ts";

/** The event types a click manifest holds (interface spec "Click manifest"; standard 7.1 ctx_token resolution). */
export const manifestEventTypes = ["content_grounded", "content_cited", "content_presented"] as const;
export type ManifestEventType = (typeof manifestEventTypes)[number];

/** Most events one manifest returns; past it, the earliest are returned and `truncated` is true. */
export const maxManifestEvents = 1000;

export interface ManifestEvent {
  type: ManifestEventType;
  timestamp: Date;
  turn_id?: string;
  output_id?: string;
  content_url: string;
  data: Record<string, unknown>;
}

export interface ClickManifest {
  started_at: Date;
  click_content_url: string;
  events: ManifestEvent[];
  content_urls_grounded: string[];
  content_urls_cited: string[];
  content_urls_presented: string[];
  truncated: boolean;
}

/** A manifest and the organisations its lookup is counted for. */
export interface ResolvedManifest {
  manifest: ClickManifest;
  issuerOrgId: string;
  /** Content owners whose events the manifest shows. */
  ownerOrgIds: string[];
}

interface TokenRow {
  session_id: string;
  org_id: string;
  content_url: string;
  started_at: Date;
  privacy_level: PrivacyLevel;
}

interface EventRow {
  event_type: ManifestEventType;
  event_time: Date;
  turn_id: string | null;
  output_id: string | null;
  content_url: string;
  data: Record<string, unknown>;
  owners: string[];
}

/**
 * The click manifest of a raw token, or undefined when there is none to show: an
 * unknown, malformed or expired token, one whose issuing organisation does not
 * share sessions via click tokens, and one engagements bound to two presentations
 * (standard 7.4.1: such a token is never resolved; ingest/clicked-presentations.ts) look alike, so a lookup cannot tell which
 * tokens exist. The session's raw id never leaves this function.
 */
export async function resolveClickManifest(sql: Sql, raw: string): Promise<ResolvedManifest | undefined> {
  const hash = hashPresentedSecret(raw, clickTokenPrefix);
  if (!hash) return undefined;
  const [token] = await sql<TokenRow[]>`
    SELECT t.session_id, t.org_id, t.content_url, s.started_at,
           coalesce(s.privacy_level, 'minimal') AS privacy_level -- undeclared: fail closed
    FROM click_tokens t
    JOIN sessions s ON s.id = t.session_id
    JOIN organization_settings o ON o.org_id = t.org_id AND o.share_sessions_via_click_tokens
    WHERE t.token_hash = ${hash} AND t.expires_at > now() AND NOT t.presentations_differ`;
  if (!token) return undefined;
  // An event belongs to every owner with a verified domain covering its host (a
  // verified domain covers its subdomains, DESIGN "Counting"). It is shown only
  // when each of them is visible in click-token lookups: one owner's opt-out is
  // not overridden by another's opt-in (a parent domain's owner, say).
  const rows = await sql<EventRow[]>`
    SELECT e.event_type, e.event_time, e.turn_id, e.output_id, e.content_url, e.data, v.owners
    FROM events e
    JOIN LATERAL (
      SELECT array_agg(d.org_id) AS owners, bool_and(coalesce(o.visible_in_click_token_lookups, false)) AS visible
      FROM domains d
      LEFT JOIN organization_settings o ON o.org_id = d.org_id
      WHERE d.state = 'verified'
        AND (e.content_host = d.domain OR right(e.content_host, char_length(d.domain) + 1) = '.' || d.domain)
    ) v ON v.owners IS NOT NULL AND v.visible
    WHERE e.session_id = ${token.session_id}::uuid
      AND e.event_type = ANY(${[...manifestEventTypes]}::text[])
      AND e.content_url IS NOT NULL
    ORDER BY e.event_time, e.event_id
    LIMIT ${maxManifestEvents + 1}`;
  const truncated = rows.length > maxManifestEvents;
  const shown = rows.slice(0, maxManifestEvents);
  return {
    manifest: {
      started_at: token.started_at,
      click_content_url: token.content_url,
      events: shown.map((row) => manifestEvent(row, token.privacy_level)),
      content_urls_grounded: urlsOf(shown, "content_grounded"),
      content_urls_cited: urlsOf(shown, "content_cited"),
      content_urls_presented: urlsOf(shown, "content_presented"),
      truncated,
    },
    issuerOrgId: token.org_id,
    ownerOrgIds: [...new Set(shown.flatMap((row) => row.owners))],
  };
}

function manifestEvent(row: EventRow, level: PrivacyLevel): ManifestEvent {
  return {
    type: row.event_type,
    timestamp: row.event_time,
    ...(row.turn_id === null ? {} : { turn_id: row.turn_id }),
    ...(row.output_id === null ? {} : { output_id: row.output_id }),
    content_url: row.content_url,
    data: withholdConversationFields(row.data, level),
  };
}

/** The distinct content URLs of one event type, in order of first appearance. */
function urlsOf(rows: readonly EventRow[], type: ManifestEventType): string[] {
  return [...new Set(rows.filter((row) => row.event_type === type).map((row) => row.content_url))];
}
