import type { Static } from "elysia";
import type { OrgType } from "../../core/organizations.ts";
import type { Queryable } from "../../db/sql.ts";
import type { SettingsRecord } from "./model.ts";

export type OrganizationSettings = Static<typeof SettingsRecord>;

export type SettingFlag = "share_sessions_via_click_tokens" | "visible_in_click_token_lookups";

/** Which organisation types may set each flag: agents and platforms share, content owners are visible. */
export const flagAppliesTo: Record<SettingFlag, readonly OrgType[]> = {
  share_sessions_via_click_tokens: ["agent", "platform"],
  visible_in_click_token_lookups: ["content_owner"],
};

/** An organisation's settings, defaults (false) when never set. */
export async function getSettings(sql: Queryable, orgId: string): Promise<OrganizationSettings> {
  const [row] = await sql<Omit<OrganizationSettings, "organization_id">[]>`
    SELECT share_sessions_via_click_tokens, visible_in_click_token_lookups
    FROM organization_settings WHERE org_id = ${orgId}::uuid`;
  return {
    organization_id: orgId,
    share_sessions_via_click_tokens: row?.share_sessions_via_click_tokens ?? false,
    visible_in_click_token_lookups: row?.visible_in_click_token_lookups ?? false,
  };
}

export async function updateSettings(
  sql: Queryable,
  orgId: string,
  patch: Partial<Record<SettingFlag, boolean>>,
): Promise<OrganizationSettings> {
  const current = await getSettings(sql, orgId);
  const next = { ...current, ...patch };
  await sql`
    INSERT INTO organization_settings (org_id, share_sessions_via_click_tokens, visible_in_click_token_lookups)
    VALUES (${orgId}::uuid, ${next.share_sessions_via_click_tokens}, ${next.visible_in_click_token_lookups})
    ON CONFLICT (org_id) DO UPDATE SET
      share_sessions_via_click_tokens = EXCLUDED.share_sessions_via_click_tokens,
      visible_in_click_token_lookups = EXCLUDED.visible_in_click_token_lookups,
      updated_at = now()`;
  return next;
}
