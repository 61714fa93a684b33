import { hostOfUrl } from "../../core/hosts.ts";
import { invalid } from "../../core/problem.ts";
import { hashPresentedSecret, mintSecret } from "../../core/secrets.ts";
import type { Sql } from "../../db/sql.ts";
import { sessionName, sessionsNamed } from "../ingest/service.ts";

/** Click token lifetime (the interface's limits table). */
export const clickTokenLifetimeDays = 90;

/** Click tokens travel in outbound links (`?ctx=`); only their SHA-256 is stored. */
export const clickTokenPrefix = "ctx_";

export interface IssuedClickToken {
  token: string;
  session_id: string;
  content_url: string;
  expires_at: Date;
}

/**
 * Issues a token for a session of `orgId`. Undefined when the organisation has
 * no session of that name (session names are per organisation, sql/067).
 */
export async function issueClickToken(
  sql: Sql,
  orgId: string,
  sessionId: string,
  contentUrl: string,
): Promise<IssuedClickToken | undefined> {
  const minted = mintSecret(clickTokenPrefix);
  const [row] = await sql<{ expires_at: Date }[]>`
    INSERT INTO click_tokens (token_hash, session_id, org_id, content_url, expires_at)
    SELECT ${minted.hash}, s.id, s.org_id, ${contentUrl}, now() + make_interval(days => ${clickTokenLifetimeDays})
    FROM sessions s WHERE ${sessionsNamed(sql, orgId, [sessionId])}
    RETURNING expires_at`;
  return row && { token: minted.raw, session_id: sessionId, content_url: contentUrl, expires_at: row.expires_at };
}

/** The session a live token stands for, with that session's agent, and where its link leads. */
export interface ClickTokenSession {
  sessionId: string;
  /** The session's organisation, the token's issuer; and its name there (sql/067). */
  orgId: string;
  sessionName: string;
  agentId: string | null;
  /** The host of the content_url the token was issued for. */
  linkHost: string | null;
}

/** Resolves raw tokens in one query; unknown, malformed and expired tokens are absent from the map. */
export async function resolveClickTokens(sql: Sql, raws: readonly string[]): Promise<Map<string, ClickTokenSession>> {
  const byHash = new Map<string, string>();
  for (const raw of raws) {
    const hash = hashPresentedSecret(raw, clickTokenPrefix);
    if (hash) byHash.set(Buffer.from(hash).toString("hex"), raw);
  }
  const resolved = new Map<string, ClickTokenSession>();
  if (byHash.size === 0) return resolved;
  const rows = await sql<
    {
      hash: string;
      session_id: string;
      org_id: string;
      session_name: string;
      agent_id: string | null;
      content_url: string;
    }[]
  >`
    SELECT encode(t.token_hash, 'hex') AS hash, t.session_id, s.org_id, ${sessionName(sql, "s")} AS session_name,
           s.agent_id, t.content_url
    FROM click_tokens t JOIN sessions s ON s.id = t.session_id
    WHERE t.token_hash IN (SELECT decode(h, 'hex') FROM unnest(${[...byHash.keys()]}::text[]) AS h)
      AND t.expires_at > now()`;
  for (const row of rows) {
    const raw = byHash.get(row.hash);
    if (!raw) continue;
    resolved.set(raw, {
      sessionId: row.session_id,
      orgId: row.org_id,
      sessionName: row.session_name,
      agentId: row.agent_id,
      linkHost: hostOfUrl(row.content_url),
    });
  }
  return resolved;
}

/** Rows one statement of the sweep deletes, so that a large backlog never holds one long transaction. */
const sweepBatch = 10_000;

/**
 * Deletes the tokens lapsed at `now` (the resolver and ingest already refuse them
 * from expires_at on); returns how many. The expiry job's sweep (src/jobs/expiry.ts).
 */
export async function deleteExpiredClickTokens(sql: Sql, now: Date): Promise<number> {
  let deleted = 0;
  for (;;) {
    const batch = await sql`
      DELETE FROM click_tokens WHERE token_hash IN (
        SELECT token_hash FROM click_tokens WHERE expires_at <= ${now} LIMIT ${sweepBatch}
      )`;
    deleted += batch.count;
    if (batch.count < sweepBatch) return deleted;
  }
}

/** A token of the standard's own pattern (`ct_…`, standard 7.4) was issued elsewhere, not by this service. */
const standardToken = /^ct_[A-Za-z0-9_-]{16,240}$/;
const ownToken = /^ctx_[A-Za-z0-9_-]{43}$/;

/** A token this service cannot have issued: 400 (malformed) or 422 (another issuer's) naming the path parameter, before any lookup. */
export function refuseForeignToken(token: string): void {
  if (ownToken.test(token)) return;
  if (standardToken.test(token)) {
    throw invalid(
      "this is a click token of another issuer: resolve it at the ctx_resolution endpoint of the issuer's manifest",
      [{ path: "/token", message: "is a ct_ token of another issuer" }],
      "foreign_click_token",
    );
  }
  const message = `is not a click token of this service (${clickTokenPrefix} followed by 43 url-safe characters)`;
  throw invalid(`token ${message}`, [{ path: "/token", message }]);
}
