import { describe, expect, test } from "bun:test";
import { createTestOrg } from "../support/fixtures.ts";
import { callIdentity, memberOf, signIn, signInOperatorAdmin } from "../support/identity.ts";

describe("GET /admin/organizations", () => {
  test("an operator admin sees every organisation with its verified domains and member count, newest first", async () => {
    const admin = await signInOperatorAdmin();
    const owner = await createTestOrg({ name: `Listed ${crypto.randomUUID()}` });
    await memberOf(owner.id, "owner");
    const platform = await createTestOrg({ type: "platform" });
    const listed = await callIdentity("GET", "/api/v1/identity/admin/organizations?limit=100", {
      session: admin.session,
    });
    expect(listed.status).toBe(200);
    const mine = listed.body.items.find((org: { id: string }) => org.id === owner.id);
    expect(mine).toMatchObject({
      org_type: "content_owner",
      verified_domains: [owner.domain],
      members: 1,
      suspended_at: null,
    });
    const ids = listed.body.items.map((org: { id: string }) => org.id);
    expect(ids.indexOf(platform.id)).toBeLessThan(ids.indexOf(owner.id));
    expect(listed.body.total).toBeGreaterThanOrEqual(2);

    const platforms = await callIdentity("GET", "/api/v1/identity/admin/organizations?org_type=platform&limit=100", {
      session: admin.session,
    });
    expect(platforms.body.items.every((org: { org_type: string }) => org.org_type === "platform")).toBe(true);
  });

  test("anyone else is refused: 403 operator_admin_required", async () => {
    const user = await signIn();
    const refused = await callIdentity("GET", "/api/v1/identity/admin/organizations", { session: user.session });
    expect({ status: refused.status, code: refused.body.code }).toEqual({
      status: 403,
      code: "operator_admin_required",
    });
  });
});
