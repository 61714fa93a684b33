/** How credentials travel: the session token in a Bearer header or a cookie. */

export const sessionCookieName = "svc_session";

/** The session token from `Authorization: Bearer …` or, failing that, the session cookie. */
export function presentedSessionToken(headers: Record<string, string | undefined>): string | undefined {
  const authorization = headers.authorization;
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match?.[1];
  }
  for (const part of (headers.cookie ?? "").split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === sessionCookieName) return value.join("=") || undefined;
  }
  return undefined;
}

/** Set-Cookie value carrying a session (HttpOnly, SameSite=Lax so sign-in redirects keep it). */
export function sessionCookie(token: string, expiresAt: Date, secure: boolean): string {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  return `${sessionCookieName}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure ? "; Secure" : ""}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return `${sessionCookieName}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure ? "; Secure" : ""}`;
}
