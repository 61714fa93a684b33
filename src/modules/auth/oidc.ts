import { createRemoteJWKSet, type JWTPayload, jwtVerify } from "jose";
import type { Config, OidcProviderConfig } from "../../config.ts";
import { ProblemError, problem } from "../../core/problem.ts";
import { randomToken, sha256 } from "../../core/secrets.ts";
import type { Sql } from "../../db/sql.ts";
import { createSession, type IssuedSession } from "./sessions.ts";
import { type User, unlinkOidcAccount, userForOidcAccount } from "./users.ts";

const loginLifetimeMinutes = 10;
const httpTimeoutMs = 10_000;
const discoveryTtlMs = 60 * 60 * 1000;

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
}

const s256 = (verifier: string) => Buffer.from(sha256(verifier)).toString("base64url");

/**
 * Sign-in with OpenID Connect providers: discovery, authorization code with PKCE
 * (S256), state and nonce kept server-side, ID token verified against the
 * provider's JWKS with jose (issuer, audience, expiry, nonce).
 */
export class OidcSignIn {
  readonly #providers: Map<string, OidcProviderConfig>;
  readonly #discovered = new Map<
    string,
    { at: number; discovery: Discovery; jwks: ReturnType<typeof createRemoteJWKSet> }
  >();

  constructor(
    providers: OidcProviderConfig[],
    private readonly config: Pick<Config, "PUBLIC_BASE_URL" | "SESSION_TTL_HOURS">,
  ) {
    this.#providers = new Map(providers.map((p) => [p.id, p]));
  }

  list(): { id: string; issuer: string }[] {
    return [...this.#providers.values()].map((p) => ({ id: p.id, issuer: p.issuer }));
  }

  /**
   * Unlinks the user from their account at the provider, so that another account
   * presenting the user's verified e-mail (a re-created one) can link next time.
   */
  async unlink(sql: Sql, providerId: string, userId: string): Promise<void> {
    const provider = this.#provider(providerId);
    if (!(await unlinkOidcAccount(sql, userId, provider.issuer))) {
      throw problem("oidc_link_not_found", `you have no account linked at "${providerId}"`);
    }
  }

  redirectUri(providerId: string): string {
    return `${this.config.PUBLIC_BASE_URL}/api/v1/identity/auth/oidc/${providerId}/callback`;
  }

  #provider(id: string): OidcProviderConfig {
    const provider = this.#providers.get(id);
    if (!provider) throw problem("oidc_provider_not_found", `no sign-in provider "${id}" is configured`);
    return provider;
  }

  async #discover(provider: OidcProviderConfig) {
    const cached = this.#discovered.get(provider.id);
    if (cached && Date.now() - cached.at < discoveryTtlMs) return cached;
    const url = `${provider.issuer.replace(/\/$/, "")}/.well-known/openid-configuration`;
    let discovery: Discovery;
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(httpTimeoutMs), redirect: "error" });
      if (!response.ok) throw new Error(`status ${response.status}`);
      discovery = (await response.json()) as Discovery;
    } catch (error) {
      throw problem(
        "oidc_provider_unavailable",
        `the sign-in provider's discovery failed: ${(error as Error).message}`,
      );
    }
    if (
      discovery.issuer !== provider.issuer ||
      !discovery.authorization_endpoint ||
      !discovery.token_endpoint ||
      !discovery.jwks_uri
    ) {
      throw problem("oidc_provider_unavailable", "the sign-in provider's discovery document is not usable");
    }
    const entry = { at: Date.now(), discovery, jwks: createRemoteJWKSet(new URL(discovery.jwks_uri)) };
    this.#discovered.set(provider.id, entry);
    return entry;
  }

  /** Starts a sign-in: remembers state, nonce and PKCE verifier, and answers the provider URL to send the browser to. */
  async start(sql: Sql, providerId: string): Promise<string> {
    const provider = this.#provider(providerId);
    const { discovery } = await this.#discover(provider);
    const state = randomToken();
    const nonce = randomToken();
    const verifier = randomToken();
    await sql`
      INSERT INTO oidc_login_states (state_hash, provider, code_verifier, nonce, expires_at)
      VALUES (${sha256(state)}, ${provider.id}, ${verifier}, ${nonce}, now() + make_interval(mins => ${loginLifetimeMinutes}))`;
    const url = new URL(discovery.authorization_endpoint);
    url.search = new URLSearchParams({
      response_type: "code",
      client_id: provider.client_id,
      redirect_uri: this.redirectUri(provider.id),
      scope: provider.scopes ?? "openid email",
      state,
      nonce,
      code_challenge: s256(verifier),
      code_challenge_method: "S256",
    }).toString();
    return url.toString();
  }

  /** Completes a sign-in from the provider's redirect: one use of the state, then code exchange and ID-token checks. */
  async finish(
    sql: Sql,
    providerId: string,
    params: { code?: string; state?: string; error?: string },
  ): Promise<{ user: User; session: IssuedSession }> {
    const provider = this.#provider(providerId);
    if (params.error) throw problem("unauthorized", `the sign-in provider refused: ${params.error}`);
    if (!params.code || !params.state) throw problem("unauthorized", "the sign-in response lacks code or state");
    const [login] = await sql<{ code_verifier: string; nonce: string }[]>`
      UPDATE oidc_login_states SET consumed_at = now()
      WHERE state_hash = ${sha256(params.state)} AND provider = ${provider.id} AND consumed_at IS NULL AND expires_at > now()
      RETURNING code_verifier, nonce`;
    if (!login) throw problem("unauthorized", "the sign-in state is unknown, expired or already used");

    const { discovery, jwks } = await this.#discover(provider);
    const idToken = await this.#exchange(provider, discovery, params.code, login.code_verifier);
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(idToken, jwks, { issuer: provider.issuer, audience: provider.client_id }));
    } catch (error) {
      throw problem("unauthorized", `the ID token did not verify: ${(error as Error).message}`);
    }
    if (claims.nonce !== login.nonce) throw problem("unauthorized", "the ID token's nonce does not match this sign-in");
    const email = typeof claims.email === "string" ? claims.email : undefined;
    // The e-mail is the account (and the operator-admin allowlist key): only one the provider
    // says it verified may sign in. Some providers send the claim as the string "true".
    const verified = claims.email_verified === true || claims.email_verified === "true";
    if (!email || !verified) {
      throw problem("unauthorized", "the provider did not vouch for a verified e-mail address");
    }
    if (typeof claims.sub !== "string" || claims.sub === "") {
      throw problem("unauthorized", "the ID token names no subject");
    }
    const account = { issuer: provider.issuer, subject: claims.sub, verifiedEmail: email };
    return sql.begin(async (tx) => {
      const user = await userForOidcAccount(tx, account);
      if (!user) {
        throw problem(
          "unauthorized",
          "this e-mail address already signs in with another account at this provider; use that account or a sign-in link",
        );
      }
      return { user, session: await createSession(tx, user.id, this.config.SESSION_TTL_HOURS) };
    });
  }

  async #exchange(provider: OidcProviderConfig, discovery: Discovery, code: string, verifier: string): Promise<string> {
    const form = new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: this.redirectUri(provider.id),
      code_verifier: verifier,
      client_id: provider.client_id,
    });
    const headers: Record<string, string> = {
      "content-type": "application/x-www-form-urlencoded",
      accept: "application/json",
    };
    if (provider.client_secret) {
      const credentials = `${encodeURIComponent(provider.client_id)}:${encodeURIComponent(provider.client_secret)}`;
      headers.authorization = `Basic ${Buffer.from(credentials).toString("base64")}`;
    }
    let body: { id_token?: unknown; error?: unknown };
    try {
      const response = await fetch(discovery.token_endpoint, {
        method: "POST",
        headers,
        body: form,
        signal: AbortSignal.timeout(httpTimeoutMs),
        redirect: "error",
      });
      body = (await response.json()) as typeof body;
      if (!response.ok)
        throw problem("unauthorized", `the provider refused the code: ${String(body.error ?? response.status)}`);
    } catch (error) {
      if (error instanceof ProblemError) throw error;
      throw problem("oidc_provider_unavailable", `the token exchange failed: ${(error as Error).message}`);
    }
    if (typeof body.id_token !== "string") throw problem("unauthorized", "the provider answered no ID token");
    return body.id_token;
  }
}
