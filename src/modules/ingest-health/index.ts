import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { accessPlugin } from "../../http/access.ts";
import { IngestHealthQuery, IngestHealthRecord } from "./model.ts";
import { ingestHealthOf } from "./service.ts";

const hourMs = 3_600_000;

/** What an emitter needs to debug its integration: its ingest per hour and its latest refusals, with their errors. */
export const ingestHealthModule = (ctx: AppContext) =>
  new Elysia({ name: "ingest-health", prefix: "/api/v1/identity", detail: { tags: ["Ingest health"] } })
    .use(accessPlugin(ctx))
    .get(
      "/ingest-health",
      async ({ access, query }) => {
        const hours = query.hours ?? 48;
        const since = new Date(Math.floor(Date.now() / hourMs) * hourMs - (hours - 1) * hourMs);
        return {
          flushed_every_seconds: ctx.ingestHealth.flushMs / 1000,
          ...(await ingestHealthOf(ctx.sql, access.orgId, since, 50)),
        };
      },
      {
        org: "read",
        query: IngestHealthQuery,
        response: IngestHealthRecord,
        detail: {
          summary:
            "Ingest per hour (events accepted, requests and events refused) and the latest refusals with their errors (member session, or identity:read key)",
        },
      },
    );
