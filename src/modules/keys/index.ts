import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { invalid, problem } from "../../core/problem.ts";
import { effectiveScopes, type Scope, UnknownScopeError } from "../../core/scopes.ts";
import { accessPlugin } from "../../http/access.ts";
import { IdParams } from "../../http/id-params.ts";
import { requireObjectBody } from "../../http/object-body.ts";
import { ownProblems } from "../../http/openapi-examples.ts";
import { answerPage, Paged, pageQuery } from "../../http/paging.ts";
import { CreatedKey, CreateKey, KeyRecord } from "./model.ts";
import { createApiKeyAs, pageOfApiKeys, revokeApiKeyAs } from "./service.ts";

export const keysModule = (ctx: AppContext) =>
  new Elysia({ name: "identity.keys", prefix: "/api/v1/identity", detail: { tags: ["Identity: API keys"] } })
    .use(accessPlugin(ctx))
    .post(
      "/keys",
      async ({ access, body, set }) => {
        let scopes: Scope[];
        try {
          scopes = effectiveScopes(body.scopes);
        } catch (error) {
          if (!(error instanceof UnknownScopeError)) throw error;
          throw invalid(error.message, [{ path: "/scopes", message: error.message }], "unknown_scope");
        }
        const { caller } = access;
        if (caller.kind === "key") {
          const beyond = scopes.filter((scope) => !caller.principal.scopes.has(scope));
          if (beyond.length > 0) {
            throw problem(
              "scope_escalation",
              `an API key cannot mint a key with scopes it lacks: ${beyond.join(", ")}`,
              {
                scopes: beyond,
              },
            );
          }
        }
        const created = await ctx.sql.begin((tx) =>
          createApiKeyAs(tx, { orgId: access.orgId, scopes, name: body.name ?? null }, access.actor),
        );
        set.status = 201;
        set.headers["cache-control"] = "no-store";
        return { ...created.record, key: created.key };
      },
      {
        org: "write",
        body: CreateKey,
        transform: requireObjectBody,
        response: { 201: CreatedKey },
        detail: {
          summary: "Mint an API key (owner/admin session, or a key with identity:write for its own organisation)",
          ...ownProblems("unknown_scope", "scope_escalation"),
          description: "The raw key is in this response only; only its hash is stored.",
        },
      },
    )
    .get("/keys", ({ access, query }) => answerPage(query, (page) => pageOfApiKeys(ctx.sql, access.orgId, page)), {
      org: "read",
      query: t.Object(pageQuery()),
      response: Paged(KeyRecord),
      detail: {
        summary: "List keys: prefix, scopes, created, last used, revoked (member session, or identity:read key)",
      },
    })
    .delete(
      "/keys/:id",
      async ({ access, params }) => {
        const revoked = await ctx.sql.begin((tx) => revokeApiKeyAs(tx, params.id, access.actor, access.orgId));
        if (!revoked) throw problem("key_not_found", "this organisation has no such key");
        ctx.keys.forget({ keyId: revoked.id });
        return revoked;
      },
      {
        org: "write",
        params: IdParams,
        response: KeyRecord,
        detail: {
          summary:
            "Revoke a key at once (owner/admin session, or identity:write key); repeated calls keep the first time",
        },
      },
    );
