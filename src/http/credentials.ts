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

/**
 * The value of the cookie `name` in a Cookie header, if it is there and not empty.
 * An empty one is passed over, not taken: a cookie another subdomain sets empty
 * would otherwise hide the service's own.
 */
export function cookieValue(cookieHeader: string | undefined, name: string): string | undefined {
  for (const part of (cookieHeader ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name && value.join("=") !== "") return value.join("=");
  }
  return undefined;
}

/**
 * A Set-Cookie value scripts cannot read (HttpOnly) that a cross-site top-level
 * GET still carries (SameSite=Lax), so sign-in redirects keep it; Max-Age 0 clears it.
 */
const httpOnlyCookie = (name: string, value: string, path: string, maxAgeSeconds: number, secure: boolean) =>
  `${name}=${value}; Path=${path}; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure ? "; Secure" : ""}`;

/** Set-Cookie value carrying a session. */
export function sessionCookie(token: string, expiresAt: Date, secure: boolean): string {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  return httpOnlyCookie(sessionCookieName, token, "/", maxAge, secure);
}

export const oidcBrowserCookieName = "svc_oidc_browser";

/**
 * Set-Cookie value binding OAuth sign-ins to the browser that starts them. It goes
 * back only to the OIDC routes; SameSite=Lax still lets the provider's redirect,
 * a top-level GET, carry it to the callback.
 */
export function oidcBrowserCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return httpOnlyCookie(oidcBrowserCookieName, value, "/api/v1/identity/auth/oidc/", maxAgeSeconds, secure);
}

export function clearedSessionCookie(secure: boolean): string {
  return httpOnlyCookie(sessionCookieName, "", "/", 0, secure);
}

/**
 * Why sign-in will not stick, when it will not: a browser keeps no Secure cookie
 * from a plain-HTTP address other than localhost, so neither the session nor an
 * OAuth start's binding would come back.
 */
export function insecureSignInWarning(publicBaseUrl: string, secureCookies: boolean): string | undefined {
  const { protocol, hostname } = new URL(publicBaseUrl);
  const loopback = hostname === "localhost" || hostname === "127.0.0.1" || hostname === "[::1]";
  if (!secureCookies || protocol !== "http:" || loopback) return undefined;
  return `PUBLIC_BASE_URL is plain HTTP (${publicBaseUrl}) while SESSION_COOKIE_SECURE is on: browsers drop Secure cookies there, so sign-in will not stick. Serve it over HTTPS, or set SESSION_COOKIE_SECURE=false for plain-HTTP development.`;
}
