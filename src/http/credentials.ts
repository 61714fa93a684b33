/** How credentials travel: the session token in a Bearer header or a cookie. */

export const sessionCookieName = "svc_session";

/** The session token from `Authorization: Bearer …` or, failing that, the session cookie. */
export function presentedSessionToken(headers: Record<string, string | undefined>): string | undefined {
  const authorization = headers.authorization;
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match?.[1];
  }
  return cookieValue(headers.cookie, sessionCookieName);
}

/** The value of the cookie `name` in a Cookie header, if it is there and not empty. */
export function cookieValue(cookieHeader: string | undefined, name: string): string | undefined {
  for (const part of (cookieHeader ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return value.join("=") || undefined;
  }
  return undefined;
}

/** Set-Cookie value carrying a session (HttpOnly, SameSite=Lax so sign-in redirects keep it). */
export function sessionCookie(token: string, expiresAt: Date, secure: boolean): string {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  return `${sessionCookieName}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure ? "; Secure" : ""}`;
}

export const oidcBrowserCookieName = "svc_oidc_browser";

/**
 * Set-Cookie value binding OAuth sign-ins to the browser that starts them. It goes
 * back only to the OIDC routes; SameSite=Lax still lets the provider's redirect,
 * a top-level GET, carry it to the callback.
 */
export function oidcBrowserCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${oidcBrowserCookieName}=${value}; Path=/api/v1/identity/auth/oidc/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure ? "; Secure" : ""}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return `${sessionCookieName}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure ? "; Secure" : ""}`;
}
