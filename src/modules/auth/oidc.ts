import { Type as T } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify } from "jose";
import type { Config, OidcProviderConfig } from "../../config.ts";
import { problem } from "../../core/problem.ts";
import { randomToken, sha256 } from "../../core/secrets.ts";
import type { Sql } from "../../db/sql.ts";
import { Email } from "./model.ts";
import { createSession, type IssuedSession } from "./sessions.ts";
import { type User, unlinkOidcAccount, userForOidcAccount } from "./users.ts";

export const loginLifetimeMinutes = 10;
const httpTimeoutMs = 10_000;
const discoveryTtlMs = 60 * 60 * 1000;
/** The clocks of the provider and the service may differ by this much (ID token nbf, iat, exp). */
const clockToleranceSeconds = 60;
/** OpenID Connect Core's limit on `sub`. */
const maxSubjectLength = 255;

/** What discovery must name; the rest of the document is not used. */
const DiscoveryDocument = T.Object({
  issuer: T.String(),
  authorization_endpoint: T.String(),
  token_endpoint: T.String(),
  jwks_uri: T.String(),
});

interface Discovery {
  authorization: URL;
  token: URL;
  jwks: ReturnType<typeof createRemoteJWKSet>;
}

const unusableDiscovery = (why: string) =>
  problem("oidc_provider_unavailable", `the sign-in provider's discovery document is not usable: ${why}`);

/** An endpoint named by the discovery document, as an http(s) URL. */
function endpointOf(document: Record<string, string>, name: string): URL {
  const text = document[name] ?? "";
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) {
    throw unusableDiscovery(`${name} is not an http(s) URL`);
  }
  return url;
}

/** The provider's endpoints from its discovery document, checked before anything is kept. */
function discoveryOf(document: unknown, issuer: string): Discovery {
  if (!Value.Check(DiscoveryDocument, document)) {
    throw unusableDiscovery("it must be an object naming issuer, authorization_endpoint, token_endpoint and jwks_uri");
  }
  if (document.issuer !== issuer) {
    throw unusableDiscovery(`it names the issuer "${document.issuer}", not the configured "${issuer}"`);
  }
  return {
    authorization: endpointOf(document, "authorization_endpoint"),
    token: endpointOf(document, "token_endpoint"),
    // jose waits 30 s after a fetch before fetching again for an unknown key id,
    // which refused sign-ins just after a provider rotated its keys. ID tokens come
    // only from the provider's token endpoint, never from the browser, so nobody
    // can make the service fetch for made-up key ids.
    jwks: createRemoteJWKSet(endpointOf(document, "jwks_uri"), { cooldownDuration: 0 }),
  };
}

/**
 * Whether an ID token failed to verify because of the provider rather than the
 * token: its key set unreachable, slow, or not a key set.
 */
const providerAtFault = (error: unknown) =>
  !(error instanceof errors.JOSEError) ||
  error instanceof errors.JWKSTimeout ||
  error instanceof errors.JWKSInvalid ||
  error.code === "ERR_JOSE_GENERIC";

/** The JSON object `text` holds, if it holds one (not an array, not a scalar). */
function jsonObjectIn(text: string): { id_token?: unknown; error?: unknown } | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The ID token's audiences, as a list (it may be one string). */
const audiencesOf = (claims: JWTPayload) => (Array.isArray(claims.aud) ? claims.aud : [claims.aud]);

/** A binding cookie's value, as `randomToken` makes it; any other value gets a new one. */
const browserBinding = /^[A-Za-z0-9_-]{43}$/;

const s256 = (verifier: string) => Buffer.from(sha256(verifier)).toString("base64url");

/**
 * Sign-in with OpenID Connect providers: discovery, authorization code with PKCE
 * (S256), state and nonce kept server-side, ID token verified against the
 * provider's JWKS with jose (issuer, audience, expiry, nonce).
 */
export class OidcSignIn {
  readonly #providers: Map<string, OidcProviderConfig>;
  readonly #discovered = new Map<string, { at: number; discovery: Discovery }>();

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

  async #discover(provider: OidcProviderConfig): Promise<Discovery> {
    const cached = this.#discovered.get(provider.id);
    if (cached && Date.now() - cached.at < discoveryTtlMs) return cached.discovery;
    const url = `${provider.issuer.replace(/\/$/, "")}/.well-known/openid-configuration`;
    let document: unknown;
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(httpTimeoutMs), redirect: "error" });
      if (!response.ok) throw new Error(`status ${response.status}`);
      document = await response.json();
    } catch (error) {
      throw problem(
        "oidc_provider_unavailable",
        `the sign-in provider's discovery failed: ${(error as Error).message}`,
      );
    }
    const discovery = discoveryOf(document, provider.issuer);
    this.#discovered.set(provider.id, { at: Date.now(), discovery });
    return discovery;
  }

  /**
   * Starts a sign-in: remembers state, nonce and PKCE verifier for the browser
   * holding `browser` (its binding cookie, made here when it has none), and
   * answers the provider URL to send it to.
   */
  async start(
    sql: Sql,
    providerId: string,
    browser: string | undefined,
  ): Promise<{ location: string; browser: string }> {
    const provider = this.#provider(providerId);
    const discovery = await this.#discover(provider);
    const binding = browser && browserBinding.test(browser) ? browser : randomToken();
    const state = randomToken();
    const nonce = randomToken();
    const verifier = randomToken();
    await sql`
      INSERT INTO oidc_login_states (state_hash, provider, code_verifier, nonce, browser_hash, expires_at)
      VALUES (${sha256(state)}, ${provider.id}, ${verifier}, ${nonce}, ${sha256(binding)},
              now() + make_interval(mins => ${loginLifetimeMinutes}))`;
    const url = new URL(discovery.authorization);
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
    return { location: url.toString(), browser: binding };
  }

  /**
   * Completes a sign-in from the provider's redirect, in the browser that started
   * it: one use of the state, then code exchange and ID-token checks.
   */
  async finish(
    sql: Sql,
    providerId: string,
    params: { code?: string; state?: string; error?: string },
    browser: string | undefined,
  ): Promise<{ user: User; session: IssuedSession }> {
    const provider = this.#provider(providerId);
    if (params.error) throw problem("unauthorized", `the sign-in provider refused: ${params.error}`);
    if (!params.code || !params.state) throw problem("unauthorized", "the sign-in response lacks code or state");
    if (!browser) {
      throw problem("unauthorized", "this browser did not start this sign-in (it sent no sign-in cookie)");
    }
    const [login] = await sql<{ code_verifier: string; nonce: string }[]>`
      DELETE FROM oidc_login_states
      WHERE state_hash = ${sha256(params.state)} AND provider = ${provider.id}
        AND browser_hash = ${sha256(browser)} AND expires_at > now()
      RETURNING code_verifier, nonce`;
    if (!login) {
      throw problem(
        "unauthorized",
        "the sign-in state is unknown, expired, already used, or was started in another browser",
      );
    }

    const discovery = await this.#discover(provider);
    const idToken = await this.#exchange(provider, discovery, params.code, login.code_verifier);
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(idToken, discovery.jwks, {
        issuer: provider.issuer,
        audience: provider.client_id,
        clockTolerance: clockToleranceSeconds,
        // Issued by the token endpoint just now: an older one, or one from the future, is not this sign-in's.
        maxTokenAge: `${loginLifetimeMinutes} minutes`,
      }));
    } catch (error) {
      if (providerAtFault(error)) {
        throw problem(
          "oidc_provider_unavailable",
          `the provider's signing keys could not be read: ${(error as Error).message}`,
        );
      }
      throw problem("unauthorized", `the ID token did not verify: ${(error as Error).message}`);
    }
    if (claims.nonce !== login.nonce) throw problem("unauthorized", "the ID token's nonce does not match this sign-in");
    // OpenID Connect Core 3.1.3.7: a token for several parties names the one it was issued to.
    if ((audiencesOf(claims).length > 1 || claims.azp !== undefined) && claims.azp !== provider.client_id) {
      throw problem("unauthorized", "the ID token was issued to another party (azp)");
    }
    const email = typeof claims.email === "string" ? claims.email : undefined;
    // The e-mail is the account (and the operator-admin allowlist key): only one the provider
    // says it verified may sign in. Some providers send the claim as the string "true".
    const verified = claims.email_verified === true || claims.email_verified === "true";
    if (!email || !verified) {
      throw problem("unauthorized", "the provider did not vouch for a verified e-mail address");
    }
    if (!Value.Check(Email, email)) {
      throw problem(
        "unauthorized",
        "the provider's e-mail address is not one this service accepts (at most 254 characters)",
      );
    }
    if (typeof claims.sub !== "string" || claims.sub === "") {
      throw problem("unauthorized", "the ID token names no subject");
    }
    if (claims.sub.length > maxSubjectLength) {
      throw problem("unauthorized", `the ID token's subject is longer than ${maxSubjectLength} characters`);
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
    let response: Response;
    let text: string;
    try {
      response = await fetch(discovery.token, {
        method: "POST",
        headers,
        body: form,
        signal: AbortSignal.timeout(httpTimeoutMs),
        redirect: "error",
      });
      text = await response.text();
    } catch (error) {
      throw problem("oidc_provider_unavailable", `the token exchange failed: ${(error as Error).message}`);
    }
    const body = jsonObjectIn(text);
    // A 4xx is the provider refusing this code (RFC 6749 5.2), whatever its body; a 5xx, or
    // a success that is no JSON object, is the provider failing.
    if (response.status >= 400 && response.status < 500) {
      throw problem("unauthorized", `the provider refused the code: ${String(body?.error ?? response.status)}`);
    }
    if (!response.ok || !body) {
      const why = response.ok ? "the answer is not a JSON object" : `status ${response.status}`;
      throw problem("oidc_provider_unavailable", `the token exchange failed: ${why}`);
    }
    if (typeof body.id_token !== "string") throw problem("unauthorized", "the provider answered no ID token");
    return body.id_token;
  }
}
