import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { problem } from "../core/problem.ts";
import type { Scope } from "../core/scopes.ts";
import { admitRequest, authenticateCountingFailures, type RateLimitClass, type RequestClient } from "./rate-limit.ts";

/** Authenticates an API key; a failure counts against the client's address (rate-limit.ts). */
export const authenticateKey = (ctx: AppContext, client: RequestClient, key: string | undefined) =>
  authenticateCountingFailures(ctx.rateLimiter, client, (beforeLookup) => ctx.keys.authenticate(key, beforeLookup));

const limitClassOf = (required: Scope | true): RateLimitClass =>
  required === "telemetry:write" ? "ingest" : required === "telemetry:read" ? "read" : "control";

/**
 * `apiKey: <scope>` on a route authenticates `X-API-Key` (401 when missing,
 * unknown or revoked), requires the scope (403 when absent) and resolves
 * `principal` for the handler. `apiKey: true` authenticates without a scope.
 * The request then counts against the key's rate limit for that kind of route (429);
 * a failed authentication counts against the client address's.
 */
export const apiKeyAuth = (ctx: AppContext) =>
  new Elysia({ name: "auth.api-key" }).macro({
    apiKey: (required: Scope | true) => ({
      async resolve({ headers, set, request, server }) {
        const principal = await authenticateKey(ctx, { server, request }, headers["x-api-key"]);
        if (required !== true && !principal.scopes.has(required)) {
          throw problem("missing_scope", `this API key lacks the ${required} scope`, {
            required_scope: required,
          });
        }
        admitRequest(ctx.rateLimiter, limitClassOf(required), principal.keyId, set.headers);
        return { principal };
      },
    }),
  });
