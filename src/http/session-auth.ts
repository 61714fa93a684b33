import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import type { AuditActor, Caller, Principal, SessionUser } from "../core/caller.ts";
import { problem } from "../core/problem.ts";
import { operatorAdminEmails } from "../modules/auth/operator-admins.ts";
import { authenticateSession } from "../modules/auth/sessions.ts";
import { authenticateKey } from "./auth.ts";
import { admitRequest, authenticateCountingFailures, type RequestClient } from "./rate-limit.ts";
import { SingleFlight } from "./single-flight.ts";

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

/**
 * `session: true` requires a signed-in user (401 without one); `session: "operator_admin"`
 * also requires the user's e-mail on OPERATOR_ADMIN_EMAILS (403 otherwise). An API key
 * never stands in for a session: a valid key alone is 403 `session_required`.
 * `caller: true` accepts an API key in X-API-Key or a session; which one may do
 * what is decided per organisation by the route (see organizations/access.ts).
 */
export const sessionAuth = (ctx: AppContext) => {
  const admins = operatorAdminEmails(ctx.config.OPERATOR_ADMIN_EMAILS);
  // Parallel requests with one session (a dashboard loading) make one lookup between them.
  const sessionLookups = new SingleFlight<SessionUser>();
  // A failed lookup counts against the client's address (rate-limit.ts).
  const authenticateUser = (client: RequestClient, token: string | undefined) =>
    authenticateCountingFailures(ctx.rateLimiter, client, (beforeLookup) =>
      token
        ? sessionLookups.run(token, () => authenticateSession(ctx.sql, token, admins, beforeLookup))
        : authenticateSession(ctx.sql, token, admins),
    );
  return new Elysia({ name: "auth.session" }).macro({
    session: (required: true | "operator_admin") => ({
      async resolve({ headers, set, request, server }) {
        const client = { server, request };
        const token = presentedSessionToken(headers);
        if (!token && headers["x-api-key"]) {
          await authenticateKey(ctx, client, headers["x-api-key"]);
          throw problem("session_required", "this endpoint needs a signed-in user session, not an API key");
        }
        const user = await authenticateUser(client, token);
        if (required === "operator_admin" && !user.isOperatorAdmin) {
          throw problem("operator_admin_required", "this endpoint is for operator admins");
        }
        admitRequest(ctx.rateLimiter, "control", `user:${user.userId}`, set.headers);
        return { user };
      },
    }),
    caller: (_accepted: true) => ({
      async resolve({ headers, set, request, server }) {
        const client = { server, request };
        let caller: Caller;
        if (headers["x-api-key"]) {
          caller = {
            kind: "key",
            principal: await authenticateKey(ctx, client, headers["x-api-key"]),
          };
        } else {
          const token = presentedSessionToken(headers);
          if (!token)
            throw problem(
              "unauthorized",
              "send an API key in X-API-Key, or a user session (Authorization: Bearer or cookie)",
            );
          caller = {
            kind: "session",
            user: await authenticateUser(client, token),
          };
        }
        const id = caller.kind === "key" ? caller.principal.keyId : `user:${caller.user.userId}`;
        admitRequest(ctx.rateLimiter, "control", id, set.headers);
        return { caller };
      },
    }),
  });
};

/** OpenAPI security requirements of session-only routes and of routes taking either credential. */
export const sessionSecurity: { [scheme: string]: string[] }[] = [{ session: [] }, { sessionCookie: [] }];
export const sessionOrKeySecurity: { [scheme: string]: string[] }[] = [...sessionSecurity, { apiKey: [] }];
