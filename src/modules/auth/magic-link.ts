import type { Config } from "../../config.ts";
import { normalizeEmail } from "../../core/email.ts";
import { problem } from "../../core/problem.ts";
import { hashPresentedSecret, mintSecret } from "../../core/secrets.ts";
import type { Sql } from "../../db/sql.ts";
import type { Mailer } from "./mailer.ts";
import { createSession, type IssuedSession } from "./sessions.ts";
import { findOrCreateUser, type User } from "./users.ts";

export const magicLinkPrefix = "ml_";
export const magicLinkPath = "/api/v1/identity/auth/magic-link/verify";

/** Links one address may be sent per link lifetime: stops the service being used to flood an inbox. */
export const maxOpenLinksPerAddress = 5;

type MagicLinkConfig = Pick<Config, "PUBLIC_BASE_URL" | "MAGIC_LINK_TTL_MINUTES">;

/** Stores a single-use token (hashed) and mails the link that carries it. */
export async function sendMagicLink(sql: Sql, mailer: Mailer, config: MagicLinkConfig, email: string): Promise<void> {
  const address = normalizeEmail(email);
  const { raw, hash } = mintSecret(magicLinkPrefix);
  // Count and insert under a lock on the address, or parallel requests would all count below the cap.
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`magic-link:${address}`}, 0))`;
    // `frees_in`: seconds until the oldest counted link leaves the window, when the next one may be sent.
    const [recent] = await tx<{ n: number; frees_in: number | null }[]>`
      SELECT count(*)::int AS n,
             ceil(extract(epoch FROM min(created_at) + make_interval(mins => ${config.MAGIC_LINK_TTL_MINUTES}) - now()))::int
               AS frees_in
      FROM magic_link_tokens
      WHERE email = ${address} AND created_at > now() - make_interval(mins => ${config.MAGIC_LINK_TTL_MINUTES})`;
    if ((recent?.n ?? 0) >= maxOpenLinksPerAddress) {
      const retryAfterSeconds = Math.max(1, recent?.frees_in ?? 1);
      throw problem(
        "too_many_sign_in_links",
        `at most ${maxOpenLinksPerAddress} sign-in links per address every ${config.MAGIC_LINK_TTL_MINUTES} minutes: use one already sent, or ask again in ${retryAfterSeconds} s`,
        { retry_after_seconds: retryAfterSeconds },
        { "retry-after": String(retryAfterSeconds) },
      );
    }
    await tx`
      INSERT INTO magic_link_tokens (email, token_hash, expires_at)
      VALUES (${address}, ${hash}, now() + make_interval(mins => ${config.MAGIC_LINK_TTL_MINUTES}))`;
  });
  const link = `${config.PUBLIC_BASE_URL}${magicLinkPath}?token=${encodeURIComponent(raw)}`;
  try {
    await mailer.send({
      to: address,
      subject: "Your sign-in link",
      text: `Sign in to Content Telemetry: ${link}\n\nThe link works once, for ${config.MAGIC_LINK_TTL_MINUTES} minutes. If you did not ask for it, ignore this message.`,
      link,
      secret: raw,
    });
  } catch (error) {
    // A link nobody received must neither linger nor count against the address's limit.
    await sql`DELETE FROM magic_link_tokens WHERE token_hash = ${hash}`;
    throw error;
  }
}

/**
 * Spends a magic-link token (atomically: a second use finds it consumed) and
 * signs its address in, creating the user on first sign-in.
 */
/**
 * The address a sign-in link signs in as, looked up without spending it: its page
 * names the account, so that a person sent someone else's link (to sign them in
 * as that someone) can tell. Unknown, expired or used: refused as when spent.
 */
export async function magicLinkAddress(sql: Sql, raw: string): Promise<string> {
  const hash = hashPresentedSecret(raw, magicLinkPrefix);
  if (!hash) throw problem("unauthorized", "the sign-in link is not valid");
  const [link] = await sql<{ email: string }[]>`
    SELECT email FROM magic_link_tokens WHERE token_hash = ${hash} AND consumed_at IS NULL AND expires_at > now()`;
  if (!link) throw problem("unauthorized", unusableLink);
  return link.email;
}

const unusableLink = "the sign-in link is unknown, expired or already used";

export async function consumeMagicLink(
  sql: Sql,
  raw: string,
  sessionTtlHours: number,
): Promise<{ user: User; session: IssuedSession }> {
  const hash = hashPresentedSecret(raw, magicLinkPrefix);
  if (!hash) throw problem("unauthorized", "the sign-in link is not valid");
  return sql.begin(async (tx) => {
    const [spent] = await tx<{ email: string }[]>`
      UPDATE magic_link_tokens SET consumed_at = now()
      WHERE token_hash = ${hash} AND consumed_at IS NULL AND expires_at > now()
      RETURNING email`;
    if (!spent) throw problem("unauthorized", unusableLink);
    const user = await findOrCreateUser(tx, spent.email);
    return { user, session: await createSession(tx, user.id, sessionTtlHours) };
  });
}
