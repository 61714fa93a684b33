import { Elysia, t } from "elysia";
import type { AppContext } from "../context.ts";
import type { Principal, SessionUser } from "../core/caller.ts";
import {
  type Access,
  declaredKey,
  declaredOrg,
  documented,
  type KeyDeclaration,
  type OrgDeclaration,
} from "./access-declarations.ts";
import { AccessResolver } from "./access-resolver.ts";
import { namedOrgId, orgAccessOf } from "./org-access.ts";

/** How a request names the organisation it acts on (added to every `org:` route's query). */
const OrgIdQuery = t.Object({
  org_id: t.Optional(
    t.String({
      format: "uuid",
      description: "organisation to act on; optional for API keys and for users who belong to one organisation",
    }),
  ),
});

/**
 * The macros a route declares who may call it with:
 * - `public: true | "by_address"`: anyone (`by_address`: counted per client address);
 * - `key: <scope> | true | { scope, orgTypes, limitClass? }`: an API key (`principal`);
 * - `session: true | "operator_admin"`: a signed-in user (`user`);
 * - `org: <need> | { need, sessionOnly?, orgTypes?, orgFrom? }`: a key or a member's
 *   session acting on an organisation (`access`), named by `org_id` (or the `:id` path segment);
 * - `partner: true`: a trusted partner's key (`principal`).
 */
export const accessPlugin = (ctx: AppContext) => {
  const resolver = new AccessResolver(ctx);
  return new Elysia({ name: "access" }).macro({
    public: (limitedBy: true | "by_address") => {
      const access: Access = { kind: "public", limitedBy: limitedBy === "by_address" ? "address" : "nothing" };
      return {
        detail: documented(access),
        async resolve(parts) {
          await resolver.admit(parts, access);
          return {};
        },
      };
    },
    key: (declared: KeyDeclaration) => {
      const access = declaredKey(declared);
      return {
        detail: documented(access),
        async resolve(parts) {
          const { principal } = await resolver.admit(parts, access);
          return { principal: principal as Principal };
        },
      };
    },
    session: (declared: true | "operator_admin") => {
      const access: Access = { kind: "session", operatorAdmin: declared === "operator_admin" };
      return {
        detail: documented(access),
        async resolve(parts) {
          const { user } = await resolver.admit(parts, access);
          return { user: user as SessionUser };
        },
      };
    },
    org: (declared: OrgDeclaration) => {
      const access = declaredOrg(declared);
      return {
        detail: documented(access),
        // Typed as always there, so that typed clients (the dashboard's Eden Treaty) may pass
        // org_id; the one route naming its organisation in the path (GET /organizations/:id) has none.
        ...((access.orgFrom === "query" ? { query: OrgIdQuery } : {}) as { query: typeof OrgIdQuery }),
        async resolve(parts) {
          const admitted = await resolver.admit(parts, access);
          // Validation has passed by now, so the organisation id is well-formed.
          return {
            access:
              admitted.org ?? (await orgAccessOf(ctx.sql, admitted, access, namedOrgId(parts, access) ?? undefined)),
          };
        },
      };
    },
    partner: (_declared: true) => {
      const access: Access = { kind: "partner" };
      return {
        detail: documented(access),
        async resolve(parts) {
          const { principal } = await resolver.admit(parts, access);
          return { principal: principal as Principal };
        },
      };
    },
  });
};
