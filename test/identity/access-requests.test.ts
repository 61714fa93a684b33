import { describe, expect, test } from "bun:test";
import { createTestOrg } from "../support/fixtures.ts";
import { callIdentity, signIn, signInOperatorAdmin, uniqueEmail } from "../support/identity.ts";

const base = "/api/v1/identity";
const requestBody = () => ({
  org_name: `Org ${crypto.randomUUID().slice(0, 6)}`,
  admin_email: uniqueEmail("admin"),
  use_case: "We run an AI agent",
});

describe.each(["platform", "agent"])("%s access requests", (orgType) => {
  const path = `${base}/${orgType}-access-requests`;

  test("create answers 201 pending with every field; list shows only the caller's own", async () => {
    const user = await signIn();
    const body = requestBody();
    const res = await callIdentity("POST", path, { session: user.session, body });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      user_id: user.userId,
      org_name: body.org_name,
      admin_email: body.admin_email,
      use_case: body.use_case,
      status: "pending",
      reviewed_at: null,
      reviewed_by: null,
      reviewer_note: null,
      approved_org_id: null,
      org_type: orgType,
    });
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(res.body.created_at).toISOString()).toBe(res.body.created_at);

    const other = await signIn();
    await callIdentity("POST", path, { session: other.session, body: requestBody() });
    const mine = await callIdentity("GET", path, { session: user.session });
    expect(mine.status).toBe(200);
    expect(mine.body.items.map((r: { id: string }) => r.id)).toEqual([res.body.id]);
    // The other kind is listed at the other endpoint.
    const otherKind = orgType === "platform" ? "agent" : "platform";
    expect(
      (await callIdentity("GET", `${base}/${otherKind}-access-requests`, { session: user.session })).body.total,
    ).toBe(0);
  });

  test("need a session: none is 401, API keys are 403", async () => {
    expect((await callIdentity("POST", path, { body: requestBody() })).status).toBe(401);
    expect((await callIdentity("GET", path)).status).toBe(401);
    const org = await createTestOrg({ type: "platform" });
    const key = await org.keyWith(["identity:read", "identity:write", "partner:provision"]);
    expect((await callIdentity("POST", path, { key, body: requestBody() })).status).toBe(403);
    expect((await callIdentity("GET", path, { key })).status).toBe(403);
  });

  test("bad bodies are 400", async () => {
    const user = await signIn();
    const good = requestBody();
    for (const body of [
      {},
      { ...good, org_name: "" },
      { ...good, admin_email: "nope" },
      { ...good, use_case: "" },
      { ...good, use_case: "x".repeat(4001) },
      { org_name: good.org_name, admin_email: good.admin_email },
    ]) {
      const res = await callIdentity("POST", path, { session: user.session, body });
      expect(res.status).toBe(400);
    }
    expect((await callIdentity("GET", path, { session: user.session })).body.total).toBe(0);
  });

  test("approval creates the organisation, makes the requester owner; a second review is 409", async () => {
    const user = await signIn();
    const created = await callIdentity("POST", path, { session: user.session, body: requestBody() });
    const admin = await signInOperatorAdmin();
    const pending = await callIdentity("GET", `${base}/admin/access-requests?org_type=${orgType}&limit=100`, {
      session: admin.session,
    });
    expect(pending.status).toBe(200);
    expect(pending.body.items.every((r: { status: string }) => r.status === "pending")).toBe(true);

    const approved = await callIdentity("POST", `${base}/admin/access-requests/${created.body.id}/approve`, {
      session: admin.session,
      body: { note: "welcome" },
    });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: "approved", reviewed_by: admin.email, reviewer_note: "welcome" });
    expect(approved.body.reviewed_at).not.toBeNull();
    expect(approved.body.approved_org_id).toMatch(/^[0-9a-f-]{36}$/);

    const orgs = await callIdentity("GET", `${base}/organizations`, { session: user.session });
    expect(orgs.body.items).toEqual([
      expect.objectContaining({
        id: approved.body.approved_org_id,
        org_type: orgType,
        role: "owner",
        name: created.body.org_name,
      }),
    ]);
    const again = await callIdentity("POST", `${base}/admin/access-requests/${created.body.id}/reject`, {
      session: admin.session,
    });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("already_reviewed");
    expect(
      (
        await callIdentity("POST", `${base}/admin/access-requests/${created.body.id}/approve`, {
          session: admin.session,
        })
      ).status,
    ).toBe(409);
    const mine = await callIdentity("GET", path, { session: user.session });
    expect(mine.body.items[0].status).toBe("approved");
    // The new organisation's trail opens as any other's does, with organization.created; newest first,
    // though both were written in one transaction.
    const audit = await callIdentity("GET", `${base}/audit`, { session: user.session });
    expect(
      audit.body.items.map((entry: { action: string; actor: { label: string } }) => [entry.action, entry.actor.label]),
    ).toEqual([
      ["access_request.approved", admin.email],
      ["organization.created", admin.email],
    ]);
  });

  test("rejection keeps the reviewer note and creates nothing", async () => {
    const user = await signIn();
    const created = await callIdentity("POST", path, { session: user.session, body: requestBody() });
    const admin = await signInOperatorAdmin();
    const rejected = await callIdentity("POST", `${base}/admin/access-requests/${created.body.id}/reject`, {
      session: admin.session,
      body: { note: "not eligible" },
    });
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({
      status: "rejected",
      reviewer_note: "not eligible",
      approved_org_id: null,
      reviewed_by: admin.email,
    });
    expect((await callIdentity("GET", `${base}/organizations`, { session: user.session })).body.total).toBe(0);
    expect(
      (
        await callIdentity("POST", `${base}/admin/access-requests/${created.body.id}/approve`, {
          session: admin.session,
        })
      ).status,
    ).toBe(409);
    const listed = await callIdentity("GET", `${base}/admin/access-requests?status=rejected&limit=100`, {
      session: admin.session,
    });
    expect(listed.body.items.some((r: { id: string }) => r.id === created.body.id)).toBe(true);
  });
});

describe("operator admin endpoints", () => {
  test("refuse non-admin sessions, keys and no credentials; unknown ids are 404; bad input 400", async () => {
    const user = await signIn();
    const created = await callIdentity("POST", `${base}/platform-access-requests`, {
      session: user.session,
      body: requestBody(),
    });
    const org = await createTestOrg({ type: "platform" });
    const key = await org.keyWith(["identity:read", "identity:write", "partner:provision"]);
    for (const [method, p] of [
      ["GET", `${base}/admin/access-requests`],
      ["POST", `${base}/admin/access-requests/${created.body.id}/approve`],
      ["POST", `${base}/admin/access-requests/${created.body.id}/reject`],
    ] as const) {
      expect((await callIdentity(method, p)).status).toBe(401);
      const asUser = await callIdentity(method, p, { session: user.session });
      expect(asUser.status).toBe(403);
      expect(asUser.body.code).toBe("operator_admin_required");
      expect((await callIdentity(method, p, { key })).status).toBe(403);
    }
    const admin = await signInOperatorAdmin();
    expect(
      (
        await callIdentity("POST", `${base}/admin/access-requests/${crypto.randomUUID()}/approve`, {
          session: admin.session,
        })
      ).status,
    ).toBe(404);
    expect(
      (await callIdentity("POST", `${base}/admin/access-requests/not-a-uuid/approve`, { session: admin.session }))
        .status,
    ).toBe(400);
    expect(
      (
        await callIdentity("POST", `${base}/admin/access-requests/${created.body.id}/reject`, {
          session: admin.session,
          body: { note: 5 },
        })
      ).status,
    ).toBe(400);
    expect(
      (await callIdentity("GET", `${base}/admin/access-requests?status=done`, { session: admin.session })).status,
    ).toBe(400);
    const still = await callIdentity("GET", `${base}/platform-access-requests`, { session: user.session });
    expect(still.body.items[0].status).toBe("pending");
  });
});

describe("text with NUL characters", () => {
  test("is 400, not a server error", async () => {
    const user = await signIn();
    const res = await callIdentity("POST", `${base}/platform-access-requests`, {
      session: user.session,
      body: { ...requestBody(), org_name: "a\u0000b" },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ path: "/org_name" })]);
    expect((await callIdentity("GET", `${base}/platform-access-requests`, { session: user.session })).body.total).toBe(
      0,
    );
  });
});
