import { t } from "elysia";

export const SettingsPatch = t.Object(
  {
    share_sessions_via_click_tokens: t.Optional(
      t.Boolean({ description: "agent and platform organisations: let GET /ctx/{token} answer for your click tokens" }),
    ),
    visible_in_click_token_lookups: t.Optional(
      t.Boolean({ description: "content owners: let your URLs appear in click manifests" }),
    ),
  },
  { minProperties: 1 },
);

export const SettingsRecord = t.Object({
  organization_id: t.String({ format: "uuid" }),
  share_sessions_via_click_tokens: t.Boolean(),
  visible_in_click_token_lookups: t.Boolean(),
});
