import type { SessionUser } from "../../core/caller.ts";
import { problem } from "../../core/problem.ts";
import { hashPresentedSecret, mintSecret } from "../../core/secrets.ts";
import type { Queryable } from "../../db/sql.ts";

export const sessionTokenPrefix = "sess_";

export interface IssuedSession {
  token: string;
  expires_at: Date;
}

export async function createSession(sql: Queryable, userId: string, ttlHours: number): Promise<IssuedSession> {
  const { raw, hash } = mintSecret(sessionTokenPrefix);
  const [row] = await sql<{ expires_at: Date }[]>`
    INSERT INTO user_sessions (user_id, token_hash, expires_at)
    VALUES (${userId}::uuid, ${hash}, now() + make_interval(hours => ${ttlHours}))
    RETURNING expires_at`;
  return { token: raw, expires_at: (row as { expires_at: Date }).expires_at };
}

/** Resolves a presented session token; 401 when it is unknown, expired or signed out. */
export async function authenticateSession(
  sql: Queryable,
  raw: string | undefined,
  operatorAdmins: ReadonlySet<string>,
  /** Runs just before a well-formed token is looked up in the database; it may throw. */
  beforeLookup: () => void = () => {},
): Promise<SessionUser> {
  if (!raw)
    throw problem("unauthorized", "sign in first: send the session as Authorization: Bearer or the session cookie");
  const hash = hashPresentedSecret(raw, sessionTokenPrefix);
  if (hash) beforeLookup();
  const [row] = hash
    ? await sql<{ id: string; user_id: string; email: string; expires_at: Date }[]>`
        SELECT s.id, s.user_id, u.email, s.expires_at
        FROM user_sessions s JOIN users u ON u.id = s.user_id
        WHERE s.token_hash = ${hash} AND s.revoked_at IS NULL AND s.expires_at > now()`
    : [];
  if (!row) throw problem("unauthorized", "the session is unknown, expired or signed out");
  return {
    sessionId: row.id,
    userId: row.user_id,
    email: row.email,
    isOperatorAdmin: operatorAdmins.has(row.email),
    expiresAt: row.expires_at,
  };
}

export async function revokeSession(sql: Queryable, sessionId: string): Promise<void> {
  await sql`UPDATE user_sessions SET revoked_at = coalesce(revoked_at, now()) WHERE id = ${sessionId}::uuid`;
}
