import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { invalid } from "../../core/problem.ts";
import { accessPlugin } from "../../http/access.ts";
import { ownProblems } from "../../http/openapi-examples.ts";
import { recordAudit } from "../audit/service.ts";
import { SettingsPatch, SettingsRecord } from "./model.ts";
import { flagAppliesTo, getSettings, type SettingFlag, updateSettings } from "./service.ts";

export const settingsModule = (ctx: AppContext) =>
  new Elysia({ name: "identity.settings", prefix: "/api/v1/identity", detail: { tags: ["Identity: settings"] } })
    .use(accessPlugin(ctx))
    .get(
      "/settings",
      async ({ access }) => {
        return getSettings(ctx.sql, access.orgId);
      },
      {
        org: "read",
        response: SettingsRecord,
        detail: {
          summary: "Read the click-token settings (both flags default to false)",
        },
      },
    )
    .patch(
      "/settings",
      async ({ access, body }) => {
        const errors = (Object.keys(body) as SettingFlag[])
          .filter((flag) => body[flag] !== undefined && !flagAppliesTo[flag].includes(access.orgType))
          .map((flag) => ({
            path: `/${flag}`,
            message: `applies to ${flagAppliesTo[flag].join(" and ")} organisations, not ${access.orgType}`,
          }));
        if (errors.length > 0) {
          throw invalid("a setting does not apply to this organisation's type", errors, "setting_not_applicable");
        }
        return ctx.sql.begin(async (tx) => {
          const settings = await updateSettings(tx, access.orgId, body);
          await recordAudit(tx, {
            actor: access.actor,
            orgId: access.orgId,
            action: "settings.updated",
            targetType: "organization",
            targetId: access.orgId,
            details: body,
          });
          return settings;
        });
      },
      {
        org: "write",
        body: SettingsPatch,
        response: SettingsRecord,
        detail: {
          summary: "Set click-token flags (owner/admin session, or identity:write key); answers the full settings",
          ...ownProblems("setting_not_applicable"),
          description:
            "share_sessions_via_click_tokens applies to agent and platform organisations, visible_in_click_token_lookups to content owners; a flag that does not apply is 422 `setting_not_applicable`.",
        },
      },
    );
