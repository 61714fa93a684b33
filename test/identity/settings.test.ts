import { describe, expect, test } from "bun:test";
import { createTestOrg } from "../support/fixtures.ts";
import { callIdentity, memberOf, signIn } from "../support/identity.ts";

const path = "/api/v1/identity/settings";

describe("settings", () => {
  test("default to false and a content owner sets visible_in_click_token_lookups", async () => {
    const org = await createTestOrg();
    const owner = await memberOf(org.id, "owner");
    const initial = await callIdentity("GET", path, { session: owner.session });
    expect(initial.status).toBe(200);
    expect(initial.body).toEqual({
      organization_id: org.id,
      share_sessions_via_click_tokens: false,
      visible_in_click_token_lookups: false,
    });
    const patched = await callIdentity("PATCH", path, {
      session: owner.session,
      body: { visible_in_click_token_lookups: true },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.visible_in_click_token_lookups).toBe(true);
    expect((await callIdentity("GET", path, { key: org.key })).body.visible_in_click_token_lookups).toBe(true);
    const refused = await callIdentity("PATCH", path, {
      session: owner.session,
      body: { share_sessions_via_click_tokens: true },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe("setting_not_applicable");
    expect(refused.body.errors[0].path).toBe("/share_sessions_via_click_tokens");
    const audit = await callIdentity("GET", "/api/v1/identity/audit", { session: owner.session });
    expect(audit.body.items[0]).toMatchObject({
      action: "settings.updated",
      details: { visible_in_click_token_lookups: true },
    });
  });

  test.each(["agent", "platform"] as const)(
    "an %s sets share_sessions_via_click_tokens with an identity:write key",
    async (type) => {
      const org = await createTestOrg({ type });
      const writer = await org.keyWith(["identity:write"]);
      const res = await callIdentity("PATCH", path, { key: writer, body: { share_sessions_via_click_tokens: true } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        organization_id: org.id,
        share_sessions_via_click_tokens: true,
        visible_in_click_token_lookups: false,
      });
      const off = await callIdentity("PATCH", path, { key: writer, body: { share_sessions_via_click_tokens: false } });
      expect(off.body.share_sessions_via_click_tokens).toBe(false);
      const wrongFlag = await callIdentity("PATCH", path, {
        key: writer,
        body: { visible_in_click_token_lookups: true },
      });
      expect(wrongFlag.status).toBe(422);
      // identity:write alone does not read; identity:read does.
      expect((await callIdentity("GET", path, { key: writer })).status).toBe(403);
      expect((await callIdentity("GET", path, { key: org.key })).status).toBe(200);
    },
  );

  test("bad bodies are 400; readers, members and strangers cannot write", async () => {
    const org = await createTestOrg({ type: "agent" });
    const admin = await memberOf(org.id, "admin");
    for (const body of [{}, { share_sessions_via_click_tokens: "yes" }, { share_sessions_via_click_tokens: 1 }, []]) {
      expect((await callIdentity("PATCH", path, { session: admin.session, body })).status).toBe(400);
    }
    const member = await memberOf(org.id, "member");
    expect((await callIdentity("GET", `${path}?org_id=${org.id}`, { session: member.session })).status).toBe(200);
    const asMember = await callIdentity("PATCH", `${path}?org_id=${org.id}`, {
      session: member.session,
      body: { share_sessions_via_click_tokens: true },
    });
    expect(asMember.status).toBe(403);
    const stranger = await signIn();
    expect((await callIdentity("GET", `${path}?org_id=${org.id}`, { session: stranger.session })).status).toBe(403);
    expect(
      (await callIdentity("PATCH", path, { key: org.key, body: { share_sessions_via_click_tokens: true } })).status,
    ).toBe(403);
    expect((await callIdentity("PATCH", path, { body: { share_sessions_via_click_tokens: true } })).status).toBe(401);
    expect((await callIdentity("GET", path)).status).toBe(401);
    expect((await callIdentity("GET", path, { session: admin.session })).body.share_sessions_via_click_tokens).toBe(
      false,
    );
  });
});
