import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { accessPlugin } from "../../http/access.ts";
import { answerPage, Paged, pageQuery } from "../../http/paging.ts";
import { AuditEventRecord } from "./model.ts";
import { listAudit } from "./service.ts";

export const auditModule = (ctx: AppContext) =>
  new Elysia({ name: "identity.audit", prefix: "/api/v1/identity", detail: { tags: ["Identity: audit"] } })
    .use(accessPlugin(ctx))
    .get("/audit", ({ access, query }) => answerPage(query, (page) => listAudit(ctx.sql, access.orgId, page)), {
      org: "manage",
      query: t.Object(pageQuery()),
      response: Paged(AuditEventRecord),
      detail: {
        summary: "Control-plane changes of an organisation, newest first (owners and admins)",
      },
    });
