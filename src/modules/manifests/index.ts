import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { invalid, problem } from "../../core/problem.ts";
import { accessPlugin } from "../../http/access.ts";
import { noContent } from "../../http/bodiless-answers.ts";
import { ownProblems } from "../../http/openapi-examples.ts";
import { recordAudit } from "../audit/service.ts";
import { fetchManifest } from "./fetch.ts";
import { ManifestRecord, ManifestRegistration } from "./model.ts";
import { findManifest, manifestOnWire, removeManifest, storeManifest } from "./service.ts";
import { manifestUrlProblem } from "./validate.ts";

export const manifestsModule = (ctx: AppContext) =>
  new Elysia({ name: "identity.manifest", prefix: "/api/v1/identity", detail: { tags: ["Identity: manifest"] } })
    .use(accessPlugin(ctx))
    .put(
      "/manifest",
      async ({ access, body }) => {
        const refused = manifestUrlProblem(body.url);
        if (refused) throw invalid(`url ${refused}`, [{ path: "/url", message: refused }]);
        // The fetch talks to the outside world: never while holding a transaction.
        const fetched = await fetchManifest(ctx.domainProbe, body.url);
        if (fetched.status !== "valid") {
          throw invalid(fetched.reason, [{ path: "/url", message: fetched.reason }], "manifest_unusable", {
            manifest_status: fetched.status,
          });
        }
        return ctx.sql.begin(async (tx) => {
          const row = await storeManifest(tx, access.orgId, body.url, fetched, new Date());
          await recordAudit(tx, {
            actor: access.actor,
            orgId: access.orgId,
            action: "manifest.registered",
            targetType: "manifest",
            targetId: body.url,
          });
          return manifestOnWire(row);
        });
      },
      {
        org: "write",
        body: ManifestRegistration,
        response: ManifestRecord,
        detail: {
          summary: "Register the organisation's participant manifest (standard 8)",
          description:
            "The manifest is fetched at once through the outbound guard of domain verification (HTTPS, public addresses only, no redirects, 5 s, 64 KiB), checked against the standard's v1 manifest schema and the rules of 8.6/8.7, and refetched when its Cache-Control max-age passes (5 min to 24 h, default 1 h; no-store or no-cache: 5 min). A manifest that cannot be fetched or is invalid is 422 manifest_unusable naming why; nothing is stored. Its Ed25519 keys verify the organisation's signed telemetry; its domains can verify its domains (method manifest).",
          ...ownProblems("manifest_unusable"),
        },
      },
    )
    .get(
      "/manifest",
      async ({ access }) => {
        const row = await findManifest(ctx.sql, access.orgId);
        if (!row) throw problem("manifest_not_found", "this organisation has registered no manifest");
        return manifestOnWire(row);
      },
      {
        org: "read",
        response: ManifestRecord,
        detail: {
          summary: "The organisation's manifest and the outcome of its last fetch",
          description:
            "A refresh that fails is recorded, not thrown: status invalid or unreachable with the problem, and the participant is unverified (its signatures are then stored as unverified) until a fetch succeeds.",
          ...ownProblems("manifest_not_found"),
        },
      },
    )
    .delete(
      "/manifest",
      async ({ access, set }) => {
        await ctx.sql.begin(async (tx) => {
          if (!(await removeManifest(tx, access.orgId))) {
            throw problem("manifest_not_found", "this organisation has registered no manifest");
          }
          await recordAudit(tx, {
            actor: access.actor,
            orgId: access.orgId,
            action: "manifest.removed",
            targetType: "manifest",
            targetId: access.orgId,
          });
        });
        set.status = 204;
      },
      {
        org: "write",
        detail: {
          summary: "Forget the organisation's manifest",
          responses: noContent("forgotten"),
          ...ownProblems("manifest_not_found"),
        },
      },
    );
