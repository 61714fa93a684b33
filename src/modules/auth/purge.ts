import type { Sql } from "../../db/sql.ts";

// Arbitrary constant: only one instance purges at a time.
const purgeLockKey = 7_260_331_020;

/**
 * Deletes sign-in material nobody can use any more: spent or expired magic
 * links (after a day), expired OAuth states (spent ones are deleted on use) and
 * ended sessions (after a week, so recent sign-outs stay inspectable). Returns rows deleted, or null when
 * another instance holds the lock.
 */
export async function purgeExpiredSignIns(sql: Sql): Promise<number | null> {
  return sql.begin(async (tx) => {
    const [lock] = await tx<{ locked: boolean }[]>`SELECT pg_try_advisory_xact_lock(${purgeLockKey}) AS locked`;
    if (!lock?.locked) return null;
    const links = await tx`
      DELETE FROM magic_link_tokens WHERE expires_at < now() - interval '1 day' OR consumed_at < now() - interval '1 day'`;
    const states = await tx`
      DELETE FROM oidc_login_states WHERE expires_at < now()`;
    const sessions = await tx`
      DELETE FROM user_sessions WHERE expires_at < now() - interval '7 days' OR revoked_at < now() - interval '7 days'`;
    return links.count + states.count + sessions.count;
  });
}
