import { describe, expect, test } from "bun:test";
import {
  activeDelegations,
  auditOf,
  contentOwner,
  delegatedSummary,
  grant,
  identityBase,
  newDelegation,
  outboxOf,
  partner,
} from "../support/delegations.ts";
import { callIdentity, memberOf } from "../support/identity.ts";
import { testRuntime } from "../support/runtime.ts";

const path = `${identityBase}/delegations`;

describe("POST /delegations", () => {
  test("a content owner grants: 201, telemetry:read by default, delegation.created for both organisations", async () => {
    const owner = await contentOwner();
    const platform = await partner();
    expect((await delegatedSummary(owner, platform)).status).toBe(403);

    const res = await grant(owner, { grantee_org_id: platform.id });
    expect(res.status).toBe(201);
    expect(res.body).toEqual(newDelegation(owner, platform));
    const delegation = { id: res.body.id, grantor_org_id: owner.id, grantee_org_id: platform.id };
    const announced = {
      event_type: "delegation.created",
      data: { delegation: { ...delegation, scopes: ["telemetry:read"] } },
    };
    expect(await outboxOf(owner.id)).toEqual([{ org_id: owner.id, ...announced }]);
    expect(await outboxOf(platform.id)).toEqual([{ org_id: platform.id, ...announced }]);
    expect(await auditOf(res.body.id)).toEqual([
      {
        org_id: owner.id,
        action: "delegation.created",
        actor_type: "api_key",
        details: { grantee_org_id: platform.id, scopes: ["telemetry:read"], delegation_request_id: null },
      },
    ]);
    expect((await delegatedSummary(owner, platform)).status).toBe(200);

    // Explicit scopes, and an agent as grantee; an owner's session with the admin role may grant too.
    const agent = await partner("agent");
    const admin = await memberOf(owner.id, "admin");
    const bySession = await callIdentity("POST", path, {
      session: admin.session,
      body: { grantee_org_id: agent.id, scopes: ["telemetry:read"] },
    });
    expect(bySession.status).toBe(201);
    expect((await auditOf(bySession.body.id))[0]).toMatchObject({ action: "delegation.created", actor_type: "user" });
  });

  test("the pair's second active delegation is 409, and nothing more is written", async () => {
    const owner = await contentOwner();
    const platform = await partner();
    expect((await grant(owner, { grantee_org_id: platform.id })).status).toBe(201);
    const again = await grant(owner, { grantee_org_id: platform.id });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("delegation_exists");
    expect(await activeDelegations(owner.id, platform.id)).toBe(1);
    expect(await outboxOf(platform.id)).toHaveLength(1);
  });

  test("bad input is 400 naming the field, and nothing is written", async () => {
    const owner = await contentOwner();
    const platform = await partner();
    const cases: [unknown, string][] = [
      [{}, "/grantee_org_id"],
      [{ grantee_org_id: "not-a-uuid" }, "/grantee_org_id"],
      [{ grantee_org_id: 5 }, "/grantee_org_id"],
      [{ grantee_org_id: platform.id, scopes: ["telemetry:write"] }, "/scopes"],
      [{ grantee_org_id: platform.id, scopes: ["telemetry:read", "identity:write"] }, "/scopes"],
      [{ grantee_org_id: platform.id, scopes: ["no-such-scope"] }, "/scopes"],
      [{ grantee_org_id: platform.id, scopes: [] }, "/scopes"],
      [{ grantee_org_id: platform.id, scopes: "telemetry:read" }, "/scopes"],
      [{ grantee_org_id: platform.id, scopes: [5] }, "/scopes/0"],
      [[{ grantee_org_id: platform.id }], "/"],
    ];
    for (const [body, field] of cases) {
      const res = await grant(owner, body);
      expect({ body, status: res.status, code: res.body.code }).toEqual({
        body,
        status: 400,
        code: "validation_failed",
      });
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
    }
    expect(await activeDelegations(owner.id, platform.id)).toBe(0);
    expect(await outboxOf(owner.id)).toEqual([]);
    expect(await outboxOf(platform.id)).toEqual([]);
  });

  test("the grantee must exist (404) and be a platform or agent (422); only content owners grant (403)", async () => {
    const owner = await contentOwner();
    const unknown = await grant(owner, { grantee_org_id: crypto.randomUUID() });
    expect([unknown.status, unknown.body.code]).toEqual([404, "organization_not_found"]);
    const otherOwner = await contentOwner();
    const toOwner = await grant(owner, { grantee_org_id: otherOwner.id });
    expect([toOwner.status, toOwner.body.code]).toEqual([422, "invalid_grantee"]);
    const self = await grant(owner, { grantee_org_id: owner.id });
    expect([self.status, self.body.code]).toEqual([422, "invalid_grantee"]);
    const platform = await partner();
    const byPlatform = await grant(platform, { grantee_org_id: (await partner()).id });
    expect([byPlatform.status, byPlatform.body.code]).toEqual([403, "content_owner_only"]);
    expect(await outboxOf(owner.id)).toEqual([]);
  });
});

describe("GET /delegations", () => {
  test("lists active delegations on either side, or one side with role; paged", async () => {
    const owner = await contentOwner();
    const [first, second] = [await partner(), await partner("agent")];
    const ids = [
      (await grant(owner, { grantee_org_id: first.id })).body.id,
      (await grant(owner, { grantee_org_id: second.id })).body.id,
    ];
    const list = (key: string, query = "") => callIdentity("GET", `${path}${query}`, { key });
    const idsOf = (res: { body: { items: { id: string }[] } }) => res.body.items.map((d) => d.id);

    const all = await list(owner.key);
    expect(all.status).toBe(200);
    expect(idsOf(all)).toEqual(ids);
    expect(all.body).toMatchObject({ total: 2, limit: 50, offset: 0 });
    expect(idsOf(await list(owner.key, "?role=grantor"))).toEqual(ids);
    expect(idsOf(await list(owner.key, "?role=grantee"))).toEqual([]);
    expect(idsOf(await list(first.key, "?role=grantee"))).toEqual([ids[0]]);
    expect(idsOf(await list(first.key, "?role=grantor"))).toEqual([]);
    const page = await list(owner.key, "?limit=1&offset=1");
    expect([idsOf(page), page.body.total]).toEqual([[ids[1]], 2]);

    // A member's session reads too; revoked delegations drop out.
    const member = await memberOf(second.id, "member");
    const bySession = await callIdentity("GET", path, { session: member.session });
    expect(idsOf(bySession)).toEqual([ids[1]]);
    expect((await callIdentity("DELETE", `${path}/${ids[1]}`, { key: owner.writer })).status).toBe(200);
    expect(idsOf(await list(owner.key))).toEqual([ids[0]]);

    for (const query of ["?role=owner", "?limit=0", "?offset=-1"]) {
      const bad = await list(owner.key, query);
      expect({ query, status: bad.status }).toEqual({ query, status: 400 });
    }
    expect((await list(owner.key, "?role=owner")).body.errors[0].path).toBe("/role");
  });
});

describe("DELETE /delegations/:id", () => {
  test("the grantor revokes: the very next delegated read is 403, delegation.revoked goes to both", async () => {
    const owner = await contentOwner();
    const platform = await partner();
    const granted = await grant(owner, { grantee_org_id: platform.id });
    // A read first, so that the grantee's key is held in memory: no cache may outlive the revocation.
    expect((await delegatedSummary(owner, platform)).status).toBe(200);

    const revoked = await callIdentity("DELETE", `${path}/${granted.body.id}`, { key: owner.writer });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: granted.body.id, revoked_at: expect.any(String) });
    const refused = await delegatedSummary(owner, platform);
    expect([refused.status, refused.body.code]).toEqual([403, "no_active_delegation"]);

    const data = {
      delegation: {
        id: granted.body.id,
        grantor_org_id: owner.id,
        grantee_org_id: platform.id,
        scopes: ["telemetry:read"],
      },
    };
    for (const org of [owner, platform]) {
      expect((await outboxOf(org.id)).map((row) => [row.event_type, row.data])).toEqual([
        ["delegation.created", data],
        ["delegation.revoked", data],
      ]);
    }
    expect((await auditOf(granted.body.id)).map((entry) => [entry.org_id, entry.action])).toEqual([
      [owner.id, "delegation.created"],
      [owner.id, "delegation.revoked"],
    ]);

    // Repeating it answers the same revocation and announces nothing new.
    const again = await callIdentity("DELETE", `${path}/${granted.body.id}`, { key: owner.writer });
    expect([again.status, again.body.revoked_at]).toEqual([200, revoked.body.revoked_at]);
    expect(await outboxOf(platform.id)).toHaveLength(2);
    expect(await auditOf(granted.body.id)).toHaveLength(2);

    // A new grant opens the reads again.
    expect((await grant(owner, { grantee_org_id: platform.id })).status).toBe(201);
    expect((await delegatedSummary(owner, platform)).status).toBe(200);
  });

  test("is for the grantor only: another owner's or an unknown id is 404, the grantee 403, a malformed id 400", async () => {
    const owner = await contentOwner();
    const platform = await partner();
    const granted = await grant(owner, { grantee_org_id: platform.id });
    const revoke = (key: string, id: string) => callIdentity("DELETE", `${path}/${id}`, { key });

    const byOtherOwner = await revoke((await contentOwner()).writer, granted.body.id);
    expect([byOtherOwner.status, byOtherOwner.body.code]).toEqual([404, "delegation_not_found"]);
    const unknown = await revoke(owner.writer, crypto.randomUUID());
    expect([unknown.status, unknown.body.code]).toEqual([404, "delegation_not_found"]);
    const byGrantee = await revoke(platform.writer, granted.body.id);
    expect([byGrantee.status, byGrantee.body.code]).toEqual([403, "content_owner_only"]);
    const malformed = await revoke(owner.writer, "not-a-uuid");
    expect([malformed.status, malformed.body.errors[0].path]).toEqual([400, "/id"]);
    const readOnly = await revoke(owner.key, granted.body.id);
    expect([readOnly.status, readOnly.body.code]).toEqual([403, "missing_scope"]);

    expect(await activeDelegations(owner.id, platform.id)).toBe(1);
    expect((await delegatedSummary(owner, platform)).status).toBe(200);
  });

  test("a revocation made outside this process (here: by hand in SQL) applies to the next read too", async () => {
    const owner = await contentOwner();
    const platform = await partner();
    const granted = await grant(owner, { grantee_org_id: platform.id });
    expect((await delegatedSummary(owner, platform)).status).toBe(200);
    const { ctx } = await testRuntime();
    await ctx.sql`UPDATE delegations SET revoked_at = now() WHERE id = ${granted.body.id}`;
    expect((await delegatedSummary(owner, platform)).status).toBe(403);
  });
});
