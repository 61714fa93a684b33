import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { accessPlugin } from "../../http/access.ts";
import { HealthResponse, ReadyResponse } from "./model.ts";
import { checkDatabase } from "./service.ts";

export const healthModule = (ctx: AppContext) =>
  new Elysia({ name: "health", detail: { tags: ["Health"] } })
    .use(accessPlugin(ctx))
    .get("/health", () => ({ status: "ok" as const }), {
      public: true,
      response: HealthResponse,
      detail: { summary: "Liveness: the process answers" },
    })
    .get(
      "/ready",
      async () => ({ status: "ready" as const, database: ctx.db.kind, latency_ms: await checkDatabase(ctx.sql) }),
      {
        public: true,
        response: ReadyResponse,
        detail: { summary: "Readiness: the database answers (503 problem when it does not)" },
      },
    );
