import { normalizeEmail } from "../../core/email.ts";
import type { Queryable } from "../../db/sql.ts";

export interface User {
  id: string;
  email: string;
  created_at: Date;
}

/** The user with this e-mail address, created on first sign-in. */
export async function findOrCreateUser(sql: Queryable, email: string): Promise<User> {
  const [user] = await sql<User[]>`
    INSERT INTO users (email) VALUES (${normalizeEmail(email)})
    ON CONFLICT (email) DO UPDATE SET email = EXCLUDED.email
    RETURNING id, email, created_at`;
  return user as User;
}

const linkedUser = async (sql: Queryable, issuer: string, subject: string): Promise<User | undefined> => {
  const [user] = await sql<User[]>`
    SELECT u.id, u.email, u.created_at
    FROM user_oidc_identities i JOIN users u ON u.id = i.user_id
    WHERE i.issuer = ${issuer} AND i.subject = ${subject}`;
  return user;
};

/**
 * The user an OpenID account signs in as: the one it is linked to, or else the user
 * of its verified e-mail, which it is then linked to (sql/027). Undefined when that
 * user is already linked to another account at the same provider.
 */
export async function userForOidcAccount(
  sql: Queryable,
  account: { issuer: string; subject: string; verifiedEmail: string },
): Promise<User | undefined> {
  const linked = await linkedUser(sql, account.issuer, account.subject);
  if (linked) return linked;
  const user = await findOrCreateUser(sql, account.verifiedEmail);
  const [link] = await sql`
    INSERT INTO user_oidc_identities (issuer, subject, user_id)
    VALUES (${account.issuer}, ${account.subject}, ${user.id})
    ON CONFLICT DO NOTHING
    RETURNING user_id`;
  if (link) return user;
  // A concurrent first sign-in of the same account may have linked it meanwhile.
  const linkedMeanwhile = await linkedUser(sql, account.issuer, account.subject);
  return linkedMeanwhile?.id === user.id ? user : undefined;
}

/** Removes the user's link to their account at this issuer; false when there was none. */
export async function unlinkOidcAccount(sql: Queryable, userId: string, issuer: string): Promise<boolean> {
  const rows = await sql`DELETE FROM user_oidc_identities WHERE user_id = ${userId} AND issuer = ${issuer} RETURNING 1`;
  return rows.length > 0;
}
