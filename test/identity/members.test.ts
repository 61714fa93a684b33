import { describe, expect, test } from "bun:test";
import { createTestOrg } from "../support/fixtures.ts";
import { callIdentity, memberOf, signIn, uniqueEmail } from "../support/identity.ts";
import { testRuntime } from "../support/runtime.ts";

const base = "/api/v1/identity";

async function orgWithOwner() {
  const org = await createTestOrg();
  const owner = await memberOf(org.id, "owner");
  return { org, owner };
}

describe("members", () => {
  test("listing shows members and roles to members' sessions only", async () => {
    const { org, owner } = await orgWithOwner();
    const member = await memberOf(org.id, "member");
    const res = await callIdentity("GET", `${base}/members`, { session: member.session });
    expect(res.status).toBe(200);
    expect(res.body.items.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([
      [owner.email, "owner"],
      [member.email, "member"],
    ]);
    const byKey = await callIdentity("GET", `${base}/members`, { key: org.key });
    expect(byKey.status).toBe(403);
    expect(byKey.body.code).toBe("session_required");
    const stranger = await signIn();
    expect((await callIdentity("GET", `${base}/members?org_id=${org.id}`, { session: stranger.session })).status).toBe(
      403,
    );
    expect((await callIdentity("GET", `${base}/members`)).status).toBe(401);
  });

  test("role rules: owners manage all; admins manage non-owners and cannot make owners; members nobody", async () => {
    const { org, owner } = await orgWithOwner();
    const admin = await memberOf(org.id, "admin");
    const member = await memberOf(org.id, "member");
    const other = await memberOf(org.id, "member");
    const patch = (who: string, target: string, role: string) =>
      callIdentity("PATCH", `${base}/members/${target}?org_id=${org.id}`, { session: who, body: { role } });

    const byMember = await patch(member.session, other.userId, "admin");
    expect(byMember.status).toBe(403);
    expect(byMember.body.code).toBe("role_required");
    expect((await patch(admin.session, other.userId, "admin")).body.role).toBe("admin");
    expect((await patch(admin.session, other.userId, "member")).body.role).toBe("member");
    // The role a member has already: answered as it is, and nothing recorded.
    const unchanged = await patch(admin.session, other.userId, "member");
    expect([unchanged.status, unchanged.body.role]).toEqual([200, "member"]);
    const changes = await callIdentity("GET", `${base}/audit?org_id=${org.id}`, { session: admin.session });
    expect(
      changes.body.items
        .filter((entry: { action: string }) => entry.action === "member.role_changed")
        .map((entry: { details: { to: string } }) => entry.details.to),
    ).toEqual(["member", "admin"]);
    const adminMakesOwner = await patch(admin.session, other.userId, "owner");
    expect(adminMakesOwner.status).toBe(403);
    expect(adminMakesOwner.body.code).toBe("owner_role_required");
    expect((await patch(admin.session, owner.userId, "member")).status).toBe(403);
    expect(
      (await callIdentity("DELETE", `${base}/members/${owner.userId}?org_id=${org.id}`, { session: admin.session }))
        .status,
    ).toBe(403);
    expect((await patch(owner.session, admin.userId, "owner")).body.role).toBe("owner");
    // Now two owners: the first may step down.
    expect((await patch(owner.session, owner.userId, "member")).body.role).toBe("member");
    const audit = await callIdentity("GET", `${base}/audit?org_id=${org.id}`, { session: admin.session });
    expect(audit.body.items[0]).toMatchObject({
      action: "member.role_changed",
      details: { from: "owner", to: "member" },
    });
    for (const body of [{}, { role: "superuser" }, { role: 1 }]) {
      expect(
        (
          await callIdentity("PATCH", `${base}/members/${other.userId}?org_id=${org.id}`, {
            session: admin.session,
            body,
          })
        ).status,
      ).toBe(400);
    }
    expect((await patch(admin.session, crypto.randomUUID(), "member")).status).toBe(404);
  });

  test("the last owner can be neither demoted nor removed, nor leave", async () => {
    const { org, owner } = await orgWithOwner();
    const demote = await callIdentity("PATCH", `${base}/members/${owner.userId}`, {
      session: owner.session,
      body: { role: "admin" },
    });
    expect(demote.status).toBe(409);
    expect(demote.body.code).toBe("last_owner");
    expect((await callIdentity("DELETE", `${base}/members/${owner.userId}`, { session: owner.session })).status).toBe(
      409,
    );
    expect(
      (await callIdentity("GET", `${base}/members?org_id=${org.id}`, { session: owner.session })).body.items[0].role,
    ).toBe("owner");
  });

  test("members may leave; admins remove members; keys never manage members", async () => {
    const { org, owner } = await orgWithOwner();
    const admin = await memberOf(org.id, "admin");
    const member = await memberOf(org.id, "member");
    const other = await memberOf(org.id, "member");
    expect(
      (await callIdentity("DELETE", `${base}/members/${member.userId}?org_id=${org.id}`, { session: member.session }))
        .status,
    ).toBe(204);
    expect(
      (await callIdentity("DELETE", `${base}/members/${other.userId}?org_id=${org.id}`, { session: admin.session }))
        .status,
    ).toBe(204);
    const writer = await org.keyWith(["identity:read", "identity:write"]);
    const byKey = await callIdentity("DELETE", `${base}/members/${admin.userId}`, { key: writer });
    expect(byKey.status).toBe(403);
    expect(byKey.body.code).toBe("session_required");
    expect(
      (await callIdentity("PATCH", `${base}/members/${admin.userId}`, { key: writer, body: { role: "member" } }))
        .status,
    ).toBe(403);
    const left = await callIdentity("GET", `${base}/members`, { session: owner.session });
    expect(left.body.items.map((m: { user_id: string }) => m.user_id).sort()).toEqual(
      [owner.userId, admin.userId].sort(),
    );
  });
});

describe("invites", () => {
  test("an owner invites an address; the signed-in user with that address claims it; invite.claimed is recorded", async () => {
    const { org, owner } = await orgWithOwner();
    const email = uniqueEmail("invitee");
    const created = await callIdentity("POST", `${base}/invites`, {
      session: owner.session,
      body: { email: email.toUpperCase(), role: "admin" },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      org_id: org.id,
      email,
      role: "admin",
      provisioning_org_id: org.id,
      claimed_at: null,
    });
    const { ctx } = await testRuntime();
    const [mail] = await ctx.sql`SELECT subject FROM mail_outbox WHERE recipient = ${email}`;
    expect(mail?.subject).toContain("invited");
    expect((await callIdentity("POST", `${base}/invites`, { session: owner.session, body: { email } })).status).toBe(
      409,
    );

    const invitee = await signIn(email);
    const mine = await callIdentity("GET", `${base}/me/invites`, { session: invitee.session });
    expect(mine.body).toEqual({
      items: [expect.objectContaining({ id: created.body.id, organization_name: "Test content_owner" })],
      total: 1,
      limit: 50,
      offset: 0,
    });
    const past = await callIdentity("GET", `${base}/me/invites?offset=1&limit=1`, { session: invitee.session });
    expect([past.body.items, past.body.total]).toEqual([[], 1]);
    const tooMany = await callIdentity("GET", `${base}/me/invites?limit=1000`, { session: invitee.session });
    expect([tooMany.status, tooMany.body.errors?.[0]?.path]).toEqual([400, "/limit"]);
    const wrongUser = await signIn();
    const refused = await callIdentity("POST", `${base}/invites/${created.body.id}/claim`, {
      session: wrongUser.session,
    });
    // The same answer as for an id that does not exist: no oracle for invitation ids.
    const unknown = await callIdentity("POST", `${base}/invites/${crypto.randomUUID()}/claim`, {
      session: wrongUser.session,
    });
    expect(refused.status).toBe(404);
    expect(refused.body.code).toBe("invite_not_found");
    expect({ ...refused.body, instance: "", request_id: "" }).toEqual({
      ...unknown.body,
      instance: "",
      request_id: "",
    });

    const claimed = await callIdentity("POST", `${base}/invites/${created.body.id}/claim`, {
      session: invitee.session,
    });
    expect(claimed.status).toBe(200);
    expect(claimed.body).toMatchObject({ organization_id: org.id, role: "admin" });
    expect(claimed.body.invite.claimed_by).toBe(invitee.userId);
    const orgs = await callIdentity("GET", `${base}/organizations`, { session: invitee.session });
    expect(orgs.body.items).toEqual([expect.objectContaining({ id: org.id, role: "admin" })]);
    const events =
      await ctx.sql`SELECT org_id, data FROM event_outbox WHERE event_type = 'invite.claimed' AND data->'invite'->>'id' = ${created.body.id}`;
    expect(events).toHaveLength(1);
    expect(events[0]?.org_id).toBe(org.id);
    expect(events[0]?.data.user_id).toBe(invitee.userId);

    const again = await callIdentity("POST", `${base}/invites/${created.body.id}/claim`, { session: invitee.session });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("invite_claimed");
    expect((await callIdentity("GET", `${base}/me/invites`, { session: invitee.session })).body.items).toEqual([]);
  });

  test("expired invites are 410; revoked ones 404; a new invite replaces an expired one", async () => {
    const { owner } = await orgWithOwner();
    const email = uniqueEmail();
    const created = await callIdentity("POST", `${base}/invites`, { session: owner.session, body: { email } });
    const { ctx } = await testRuntime();
    await ctx.sql`UPDATE invites SET expires_at = now() - interval '1 second' WHERE id = ${created.body.id}`;
    const invitee = await signIn(email);
    const expired = await callIdentity("POST", `${base}/invites/${created.body.id}/claim`, {
      session: invitee.session,
    });
    expect(expired.status).toBe(410);
    // An expired invitation is no longer open: the organisation's list leaves it out.
    const afterExpiry = await callIdentity("GET", `${base}/invites`, { session: owner.session });
    expect([afterExpiry.body.items, afterExpiry.body.total]).toEqual([[], 0]);
    const fresh = await callIdentity("POST", `${base}/invites`, { session: owner.session, body: { email } });
    expect(fresh.status).toBe(201);
    const listed = await callIdentity("GET", `${base}/invites`, { session: owner.session });
    expect(listed.body.items.map((i: { id: string }) => i.id)).toEqual([fresh.body.id]);
    expect((await callIdentity("DELETE", `${base}/invites/${fresh.body.id}`, { session: owner.session })).status).toBe(
      204,
    );
    expect((await callIdentity("DELETE", `${base}/invites/${fresh.body.id}`, { session: owner.session })).status).toBe(
      404,
    );
    expect(
      (await callIdentity("POST", `${base}/invites/${fresh.body.id}/claim`, { session: invitee.session })).status,
    ).toBe(404);
    expect(
      (await callIdentity("POST", `${base}/invites/${crypto.randomUUID()}/claim`, { session: invitee.session })).status,
    ).toBe(404);
  });

  test("one address gets at most 5 invitations a day from all organisations, revoked ones counted", async () => {
    const [first, second] = [await orgWithOwner(), await orgWithOwner()];
    const email = uniqueEmail("flooded");
    const inviteAndRevoke = async (owner: { session: string }) => {
      const invited = await callIdentity("POST", `${base}/invites`, { session: owner.session, body: { email } });
      if (invited.status !== 201) return invited;
      expect(
        (await callIdentity("DELETE", `${base}/invites/${invited.body.id}`, { session: owner.session })).status,
      ).toBe(204);
      return invited;
    };
    for (const { owner } of [first, first, first, second, second])
      expect((await inviteAndRevoke(owner)).status).toBe(201);
    const refused = await inviteAndRevoke(first.owner);
    expect([refused.status, refused.body.code]).toEqual([429, "too_many_invitations"]);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(86_000);
    const { ctx } = await testRuntime();
    const mailed = await ctx.sql`SELECT 1 FROM mail_outbox WHERE recipient = ${email}`;
    expect(mailed).toHaveLength(5);
    // Another address is not held up.
    const other = await callIdentity("POST", `${base}/invites`, {
      session: first.owner.session,
      body: { email: uniqueEmail() },
    });
    expect(other.status).toBe(201);
  });

  test("role rules and credentials for inviting", async () => {
    const { org } = await orgWithOwner();
    const admin = await memberOf(org.id, "admin");
    const member = await memberOf(org.id, "member");
    const asAdmin = await callIdentity("POST", `${base}/invites`, {
      session: admin.session,
      body: { email: uniqueEmail(), role: "owner" },
    });
    expect(asAdmin.status).toBe(403);
    expect(asAdmin.body.code).toBe("owner_role_required");
    expect(
      (await callIdentity("POST", `${base}/invites`, { session: admin.session, body: { email: uniqueEmail() } })).body
        .role,
    ).toBe("member");
    expect(
      (
        await callIdentity("POST", `${base}/invites?org_id=${org.id}`, {
          session: member.session,
          body: { email: uniqueEmail() },
        })
      ).status,
    ).toBe(403);
    expect((await callIdentity("GET", `${base}/invites?org_id=${org.id}`, { session: member.session })).status).toBe(
      403,
    );
    const writer = await org.keyWith(["identity:read", "identity:write"]);
    expect(
      (await callIdentity("POST", `${base}/invites`, { key: writer, body: { email: uniqueEmail() } })).status,
    ).toBe(403);
    expect((await callIdentity("GET", `${base}/invites`, { key: writer })).status).toBe(403);
    expect((await callIdentity("POST", `${base}/invites`, { body: { email: uniqueEmail() } })).status).toBe(401);
    expect((await callIdentity("GET", `${base}/me/invites`, { key: writer })).status).toBe(403);
    expect((await callIdentity("POST", `${base}/invites/${crypto.randomUUID()}/claim`, { key: writer })).status).toBe(
      403,
    );
    expect((await callIdentity("POST", `${base}/invites/${crypto.randomUUID()}/claim`)).status).toBe(401);
    for (const body of [{}, { email: "nope" }, { email: uniqueEmail(), role: "boss" }]) {
      expect((await callIdentity("POST", `${base}/invites`, { session: admin.session, body })).status).toBe(400);
    }
    expect((await callIdentity("POST", `${base}/invites/not-a-uuid/claim`, { session: admin.session })).status).toBe(
      400,
    );
  });

  test("an owner's invitation is revoked by an owner only, as only an owner makes one", async () => {
    const { org, owner } = await orgWithOwner();
    const admin = await memberOf(org.id, "admin");
    const invite = async (role: string) =>
      (
        await callIdentity("POST", `${base}/invites?org_id=${org.id}`, {
          session: owner.session,
          body: { email: uniqueEmail(), role },
        })
      ).body.id as string;
    const revoke = (session: string, id: string) =>
      callIdentity("DELETE", `${base}/invites/${id}?org_id=${org.id}`, { session });
    const ownerInvite = await invite("owner");
    const refused = await revoke(admin.session, ownerInvite);
    expect([refused.status, refused.body.code]).toEqual([403, "owner_role_required"]);
    const open = await callIdentity("GET", `${base}/invites?org_id=${org.id}`, { session: owner.session });
    expect(open.body.items.map((i: { id: string }) => i.id)).toContain(ownerInvite);
    expect((await revoke(admin.session, await invite("admin"))).status).toBe(204);
    expect((await revoke(owner.session, ownerInvite)).status).toBe(204);
  });

  test("claiming keeps a higher role the user already has", async () => {
    const { org, owner } = await orgWithOwner();
    const admin = await memberOf(org.id, "admin");
    const created = await callIdentity("POST", `${base}/invites`, {
      session: owner.session,
      body: { email: admin.email, role: "member" },
    });
    const claimed = await callIdentity("POST", `${base}/invites/${created.body.id}/claim`, { session: admin.session });
    expect(claimed.body.role).toBe("admin");
  });
});
