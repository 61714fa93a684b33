import { createApp } from "../../src/app.ts";
import type { Config } from "../../src/config.ts";
import type { AppContext } from "../../src/context.ts";
import type { MemberRole } from "../../src/core/organizations.ts";
import { createMailer } from "../../src/modules/auth/mailer.ts";
import { addMember } from "../../src/modules/organizations/service.ts";
import { testDomainProbe } from "./domain-probe.ts";
import { type CallOptions, type CallResult, callApp } from "./http.ts";
import { testRuntime } from "./runtime.ts";

/** The operator admin allowlisted in the identity test app. */
export const operatorAdminEmail = "operator@admin.test";

let identityApp: Promise<{ ctx: AppContext; app: ReturnType<typeof createApp> }> | undefined;

/**
 * The app with identity settings tests need (an operator admin allowlist, the
 * in-test DNS and web for domain verification), on the shared test database.
 * `buildIdentityApp(config)` builds a separate one with more settings.
 */
export function identityTestApp() {
  identityApp ??= buildIdentityApp();
  return identityApp;
}

export async function buildIdentityApp(config: Partial<Config> = {}) {
  const { ctx: base } = await testRuntime();
  const merged = { ...base.config, OPERATOR_ADMIN_EMAILS: operatorAdminEmail, SESSION_COOKIE_SECURE: true, ...config };
  const ctx: AppContext = {
    ...base,
    config: merged,
    mailer: createMailer(merged, base.sql, base.log),
    domainProbe: testDomainProbe,
  };
  return { ctx, app: createApp(ctx) };
}

export interface IdentityCallOptions extends CallOptions {
  /** A session token sent as Authorization: Bearer. */
  session?: string;
  app?: ReturnType<typeof createApp>;
}

/** Like `call`, through the identity test app, with an optional session. */
export async function callIdentity<T = any>(
  method: string,
  path: string,
  options: IdentityCallOptions = {},
): Promise<CallResult<T>> {
  const app = options.app ?? (await identityTestApp()).app;
  const headers: Record<string, string> = { ...options.headers };
  if (options.session) headers.authorization = `Bearer ${options.session}`;
  return callApp<T>(app, method, path, { ...options, headers });
}

export function uniqueEmail(label = "user"): string {
  return `${label}-${crypto.randomUUID().slice(0, 8)}@people.test`;
}

/** The token of the newest sign-in link mailed to `email` (development transport). */
export async function latestMagicToken(email: string): Promise<string> {
  const { ctx } = await testRuntime();
  const [mail] = await ctx.sql<{ link: string }[]>`
    SELECT link FROM mail_outbox WHERE recipient = ${email.toLowerCase()} AND link LIKE '%magic-link%'
    ORDER BY created_at DESC LIMIT 1`;
  if (!mail) throw new Error(`no sign-in link mailed to ${email}`);
  return new URL(mail.link).searchParams.get("token") ?? "";
}

export interface SignedInUser {
  email: string;
  userId: string;
  session: string;
}

/** Signs `email` in through the magic-link endpoints and returns its session. */
export async function signIn(email = uniqueEmail()): Promise<SignedInUser> {
  const sent = await callIdentity("POST", "/api/v1/identity/auth/magic-link", { body: { email } });
  if (sent.status !== 202) throw new Error(`magic link request failed: ${sent.status}`);
  const verified = await callIdentity("POST", "/api/v1/identity/auth/magic-link/verify", {
    body: { token: await latestMagicToken(email) },
  });
  if (verified.status !== 200) throw new Error(`magic link verify failed: ${verified.status}`);
  return { email: email.toLowerCase(), userId: verified.body.user.id, session: verified.body.session_token };
}

let operatorAdmin: Promise<SignedInUser> | undefined;

/** The operator admin's session, signed in once per run (tests never sign it out). */
export function signInOperatorAdmin(): Promise<SignedInUser> {
  operatorAdmin ??= signIn(operatorAdminEmail);
  return operatorAdmin;
}

/** Signs a new user in and gives them `role` in an organisation (as an owner would have). */
export async function memberOf(orgId: string, role: MemberRole, email = uniqueEmail(role)): Promise<SignedInUser> {
  const user = await signIn(email);
  const { ctx } = await testRuntime();
  await addMember(ctx.sql, orgId, user.userId, role);
  return user;
}
