import type { Queryable } from "../../db/client.ts";

export interface User {
  id: string;
  email: string;
  created_at: Date;
}

/** E-mail addresses are compared case-insensitively: stored trimmed and lower-cased. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The user with this e-mail address, created on first sign-in. */
export async function findOrCreateUser(sql: Queryable, email: string): Promise<User> {
  const [user] = await sql<User[]>`
    INSERT INTO users (email) VALUES (${normalizeEmail(email)})
    ON CONFLICT (email) DO UPDATE SET email = EXCLUDED.email
    RETURNING id, email, created_at`;
  return user as User;
}
