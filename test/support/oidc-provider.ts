import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import { sha256 } from "../../src/core/secrets.ts";

/** What the simulated user and provider put in the ID token, beyond the defaults; `null` removes a claim. */
export type ClaimOverrides = Record<string, unknown>;

interface PendingCode {
  clientId: string;
  redirectUri: string;
  challenge: string;
  nonce: string;
  claims: ClaimOverrides;
  signWithStrangerKey: boolean;
}

/**
 * A minimal OpenID Connect provider on loopback (discovery, JWKS, token endpoint)
 * that signs ID tokens with a key made here. `approve` plays the user at the
 * authorization endpoint and answers the redirect back to the app.
 */
export async function startOidcProvider(client: { id: string; secret?: string }) {
  let signing = await generateKeyPair("ES256");
  const stranger = await generateKeyPair("ES256");
  const published = async (kid: string) => ({ ...(await exportJWK(signing.publicKey)), kid, alg: "ES256", use: "sig" });
  let jwk = await published("test-key");
  const codes = new Map<string, PendingCode>();
  /** Answers that replace the provider's own at a path, to play a provider that misbehaves. */
  const replaced = new Map<string, () => Response | Promise<Response>>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request): Promise<Response> {
      const url = new URL(request.url);
      const replacement = replaced.get(url.pathname);
      if (replacement) return replacement();
      if (url.pathname === "/.well-known/openid-configuration") {
        return Response.json({
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
        });
      }
      if (url.pathname === "/jwks") return Response.json({ keys: [jwk] });
      if (url.pathname === "/token" && request.method === "POST") return token(request);
      return new Response("not found", { status: 404 });
    },
  });
  server.unref();
  const issuer: string = `http://127.0.0.1:${server.port}`;

  async function token(request: Request): Promise<Response> {
    const form = new URLSearchParams(await request.text());
    // A confidential client authenticates with HTTP Basic; a public one names itself in the form only.
    const authenticated =
      client.secret === undefined
        ? request.headers.get("authorization") === null && form.get("client_id") === client.id
        : request.headers.get("authorization") ===
          `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString("base64")}`;
    if (!authenticated) return Response.json({ error: "invalid_client" }, { status: 401 });
    const pending = codes.get(form.get("code") ?? "");
    codes.delete(form.get("code") ?? "");
    const verifier = form.get("code_verifier") ?? "";
    if (
      !pending ||
      form.get("grant_type") !== "authorization_code" ||
      form.get("redirect_uri") !== pending.redirectUri ||
      Buffer.from(sha256(verifier)).toString("base64url") !== pending.challenge
    ) {
      return Response.json({ error: "invalid_grant" }, { status: 400 });
    }
    const claims: JWTPayload = {
      // A new account at the provider on every sign-in, unless the test names one.
      sub: crypto.randomUUID(),
      email: "oidc-user@people.test",
      email_verified: true,
      nonce: pending.nonce,
    };
    for (const [name, value] of Object.entries(pending.claims)) {
      if (value === null) delete claims[name];
      else claims[name] = value;
    }
    const jwt = new SignJWT(claims)
      .setProtectedHeader({ alg: "ES256", kid: jwk.kid })
      .setIssuer((pending.claims.iss as string) ?? issuer)
      .setAudience((pending.claims.aud as string | string[]) ?? pending.clientId)
      .setIssuedAt(pending.claims.iat as number | undefined)
      .setExpirationTime((pending.claims.exp as number) ?? "5m");
    const idToken = await jwt.sign(pending.signWithStrangerKey ? stranger.privateKey : signing.privateKey);
    return Response.json({ access_token: "at", token_type: "Bearer", id_token: idToken });
  }

  return {
    issuer,
    /** Signs with a new key from now on, published alone under a new kid, as a provider rotating its keys. */
    async rotateKey(): Promise<void> {
      signing = await generateKeyPair("ES256");
      jwk = await published(`test-key-${crypto.randomUUID()}`);
    },
    /** From now on `path` (/.well-known/openid-configuration, /jwks, /token) answers with `respond`; undefined restores it. */
    replaceAnswer(path: string, respond: (() => Response | Promise<Response>) | undefined): void {
      if (respond) replaced.set(path, respond);
      else replaced.delete(path);
    },
    /** The user consents at `authorizationUrl`; answers the app's callback path with code and state. */
    approve(
      authorizationUrl: string,
      options: { claims?: ClaimOverrides; signWithStrangerKey?: boolean } = {},
    ): string {
      const url = new URL(authorizationUrl);
      const code = crypto.randomUUID();
      codes.set(code, {
        clientId: url.searchParams.get("client_id") ?? "",
        redirectUri: url.searchParams.get("redirect_uri") ?? "",
        challenge: url.searchParams.get("code_challenge") ?? "",
        nonce: url.searchParams.get("nonce") ?? "",
        claims: options.claims ?? {},
        signWithStrangerKey: options.signWithStrangerKey ?? false,
      });
      const callback = new URL(url.searchParams.get("redirect_uri") ?? "");
      callback.search = new URLSearchParams({ code, state: url.searchParams.get("state") ?? "" }).toString();
      return `${callback.pathname}${callback.search}`;
    },
  };
}
