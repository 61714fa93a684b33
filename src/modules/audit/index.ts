import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { PageQuery, pageOf } from "../../http/paging.ts";
import { sessionAuth, sessionSecurity } from "../../http/session-auth.ts";
import { resolveOrgAccess } from "../organizations/access.ts";
import { OrgIdQuery } from "../organizations/model.ts";
import { listAudit } from "./service.ts";

export const auditModule = (ctx: AppContext) =>
  new Elysia({ name: "identity.audit", prefix: "/api/v1/identity", detail: { tags: ["Identity: audit"] } })
    .use(sessionAuth(ctx))
    .get(
      "/audit",
      async ({ caller, query }) => {
        const access = await resolveOrgAccess(ctx.sql, caller, query.org_id, "manage");
        const page = pageOf(query);
        return { ...(await listAudit(ctx.sql, access.orgId, page)), ...page };
      },
      {
        caller: true,
        query: t.Object({ ...OrgIdQuery, ...PageQuery }),
        detail: {
          summary: "Control-plane changes of an organisation, newest first (owners and admins)",
          security: sessionSecurity,
        },
      },
    );
