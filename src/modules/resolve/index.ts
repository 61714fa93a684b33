import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { accessPlugin } from "../../http/access.ts";
import { Resolution, ResolveQuery } from "./model.ts";
import { queriedHost, resolveDomain } from "./service.ts";

/** Public domain resolution, served at the base address beside the reads (`{base_url}/resolve`). */
export const resolveModule = (ctx: AppContext) =>
  new Elysia({ name: "resolve", detail: { tags: ["Domain resolution"] } })
    .use(accessPlugin(ctx))
    .get("/resolve", ({ query }) => resolveDomain(ctx.sql, queriedHost(query)), {
      public: "by_address",
      query: ResolveQuery,
      response: Resolution,
      detail: {
        summary: "Does a registered content owner handle this domain? (public)",
        description:
          "handled is true when a content owner has verified the host or a parent domain of it; registered-but-unverified domains do not count. Unknown domains answer handled false, organization null.",
      },
    });
