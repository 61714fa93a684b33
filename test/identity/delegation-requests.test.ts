import { describe, expect, test } from "bun:test";
import { expireDelegationRequests } from "../../src/modules/delegations/service.ts";
import { testServerUrl } from "../support/databases.ts";
import {
  activeDelegations,
  appAt,
  auditOf,
  contentOwner,
  days,
  decide,
  delegatedSummary,
  fileRequest,
  grant,
  identityBase,
  newDelegation,
  outboxOf,
  partner,
  requestsFiledBy,
} from "../support/delegations.ts";
import { createTestOrg, uniqueDomain } from "../support/fixtures.ts";
import { callIdentity, memberOf } from "../support/identity.ts";
import { untilWaitingOnLocks } from "../support/polling.ts";
import { testRuntime } from "../support/runtime.ts";

const path = `${identityBase}/delegation-requests`;
const idsOf = (res: { body: { items: { id: string }[] } }) => res.body.items.map((r) => r.id);

describe("POST /delegation-requests", () => {
  test("files a pending request for 30 days and writes delegation_request.created to the grantor only", async () => {
    const owner = await contentOwner();
    const platform = await partner();
    const res = await fileRequest(platform, { domain: owner.domain });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      grantor_org_id: owner.id,
      grantee_org_id: platform.id,
      domain: owner.domain,
      scopes: ["telemetry:read"],
      status: "pending",
      created_at: expect.any(String),
      expires_at: expect.any(String),
      resolved_at: null,
      delegation_id: null,
    });
    expect(Date.parse(res.body.expires_at) - Date.parse(res.body.created_at)).toBe(days(30));
    const { id, grantor_org_id, grantee_org_id, domain, scopes, created_at, expires_at } = res.body;
    expect(await outboxOf(owner.id)).toEqual([
      {
        org_id: owner.id,
        event_type: "delegation_request.created",
        data: { delegation_request: { id, grantor_org_id, grantee_org_id, domain, scopes, created_at, expires_at } },
      },
    ]);
    expect(await outboxOf(platform.id)).toEqual([]);
    expect(await auditOf(id)).toEqual([
      {
        org_id: platform.id,
        action: "delegation_request.created",
        actor_type: "api_key",
        details: { grantor_org_id: owner.id, domain: owner.domain, scopes: ["telemetry:read"] },
      },
    ]);
    // Nothing is delegated yet.
    expect((await delegatedSummary(owner, platform)).status).toBe(403);
  });

  test("a subdomain, or any spelling of the domain, asks the owner that verified it; an agent may ask too", async () => {
    const owner = await contentOwner();
    const agent = await partner("agent");
    const res = await fileRequest(agent, { domain: `News.${owner.domain.toUpperCase()}.`, scopes: ["telemetry:read"] });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ grantor_org_id: owner.id, domain: `news.${owner.domain}` });
    // An owner's admin session may file for a platform as well as its keys.
    const platform = await partner();
    const admin = await memberOf(platform.id, "admin");
    const bySession = await callIdentity("POST", path, { session: admin.session, body: { domain: owner.domain } });
    expect(bySession.status).toBe(201);
  });

  test("404 when no organisation has verified the domain, even if one registered it", async () => {
    const platform = await partner();
    const unverified = await createTestOrg({ verified: false });
    for (const domain of [uniqueDomain("nobody"), unverified.domain as string]) {
      const res = await fileRequest(platform, { domain });
      expect([res.status, res.body.code]).toEqual([404, "verified_domain_not_found"]);
    }
    expect(await requestsFiledBy(platform.id)).toEqual([]);
  });

  test("409 when the pair has a pending request or an active delegation", async () => {
    const owner = await contentOwner();
    const platform = await partner();
    const first = await fileRequest(platform, { domain: owner.domain });
    const pending = await fileRequest(platform, { domain: `www.${owner.domain}` });
    expect([pending.status, pending.body.code]).toEqual([409, "delegation_request_pending"]);

    const other = await partner();
    expect((await grant(owner, { grantee_org_id: other.id })).status).toBe(201);
    const delegated = await fileRequest(other, { domain: owner.domain });
    expect([delegated.status, delegated.body.code]).toEqual([409, "delegation_exists"]);

    expect((await requestsFiledBy(platform.id)).map((r) => r.id)).toEqual([first.body.id]);
    expect(await requestsFiledBy(other.id)).toEqual([]);
    expect((await outboxOf(owner.id)).filter((e) => e.event_type === "delegation_request.created")).toHaveLength(1);
  });

  test("bad input is 400 naming the field, and nothing is written", async () => {
    const owner = await contentOwner();
    const platform = await partner();
    const cases: [unknown, string, string][] = [
      [{}, "/domain", "validation_failed"],
      [{ domain: 5 }, "/domain", "validation_failed"],
      [{ domain: "" }, "/domain", "validation_failed"],
      [{ domain: "not a domain" }, "/domain", "invalid_domain"],
      [{ domain: "https://example.com/page" }, "/domain", "invalid_domain"],
      [{ domain: "127.0.0.1" }, "/domain", "invalid_domain"],
      [{ domain: "co.uk" }, "/domain", "invalid_domain"],
      [{ domain: owner.domain, scopes: ["telemetry:write"] }, "/scopes", "validation_failed"],
      [{ domain: owner.domain, scopes: ["made-up"] }, "/scopes", "validation_failed"],
      [{ domain: owner.domain, scopes: [] }, "/scopes", "validation_failed"],
      [{ domain: owner.domain, scopes: [true] }, "/scopes/0", "validation_failed"],
    ];
    for (const [body, field, code] of cases) {
      const res = await fileRequest(platform, body);
      expect({ body, status: res.status, code: res.body.code }).toEqual({ body, status: 400, code });
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
    }
    expect(await requestsFiledBy(platform.id)).toEqual([]);
    expect(await outboxOf(owner.id)).toEqual([]);
  });

  test("a missing or unknown key is 401, a key without identity:write 403, and nothing is filed", async () => {
    const owner = await contentOwner();
    const platform = await partner();
    const body = { domain: owner.domain };
    const none = await callIdentity("POST", path, { body });
    expect([none.status, none.body.code]).toEqual([401, "unauthorized"]);
    const unknown = await callIdentity("POST", path, { key: `svc_pk_${"x".repeat(43)}`, body });
    expect([unknown.status, unknown.body.code]).toEqual([401, "unauthorized"]);
    const readOnly = await callIdentity("POST", path, { key: platform.key, body });
    expect([readOnly.status, readOnly.body.code, readOnly.body.required_scope]).toEqual([
      403,
      "missing_scope",
      "identity:write",
    ]);
    expect(await requestsFiledBy(platform.id)).toEqual([]);
  });

  test("a content owner files no requests, for its own domain or any other (403)", async () => {
    const owner = await contentOwner();
    const other = await contentOwner();
    for (const domain of [owner.domain, other.domain]) {
      const res = await fileRequest(owner, { domain });
      expect([res.status, res.body.code]).toEqual([403, "platform_key_required"]);
    }
    expect(await outboxOf(owner.id)).toEqual([]);
    expect(await outboxOf(other.id)).toEqual([]);
  });
});

describe("GET /delegation-requests", () => {
  test("lists pending requests addressed to the organisation or filed by it; role picks one side", async () => {
    const owner = await contentOwner();
    const [first, second] = [await partner(), await partner("agent")];
    const a = (await fileRequest(first, { domain: owner.domain })).body.id;
    const b = (await fileRequest(second, { domain: owner.domain })).body.id;
    const list = (key: string, query = "") => callIdentity("GET", `${path}${query}`, { key });

    const all = await list(owner.key);
    expect([all.status, idsOf(all), all.body.total]).toEqual([200, [a, b], 2]);
    expect(idsOf(await list(owner.key, "?role=grantor"))).toEqual([a, b]);
    expect(idsOf(await list(owner.key, "?role=grantee"))).toEqual([]);
    expect(idsOf(await list(first.key, "?role=grantee"))).toEqual([a]);
    expect(idsOf(await list(first.key, "?role=grantor"))).toEqual([]);
    expect(idsOf(await list(owner.key, "?limit=1&offset=1"))).toEqual([b]);

    // Resolved requests drop out.
    expect((await decide(owner, a, "deny")).status).toBe(204);
    expect(idsOf(await list(owner.key))).toEqual([b]);
    expect((await list(owner.key, "?role=both")).status).toBe(400);
  });
});

describe("POST /delegation-requests/:id/approve and /deny", () => {
  test("approve: 201 with the delegation, delegation.created for both; then reads work and a repeat is 409", async () => {
    const owner = await contentOwner();
    const platform = await partner();
    const request = (await fileRequest(platform, { domain: owner.domain })).body;

    const approved = await decide(owner, request.id, "approve");
    expect(approved.status).toBe(201);
    expect(approved.body).toEqual(newDelegation(owner, platform));
    const delegation = {
      id: approved.body.id,
      grantor_org_id: owner.id,
      grantee_org_id: platform.id,
      scopes: ["telemetry:read"],
    };
    const created = { event_type: "delegation.created", data: { delegation } };
    expect((await outboxOf(owner.id)).map(({ event_type, data }) => ({ event_type, data }))).toEqual([
      expect.objectContaining({ event_type: "delegation_request.created" }),
      created,
    ]);
    expect(await outboxOf(platform.id)).toEqual([{ org_id: platform.id, ...created }]);
    expect((await delegatedSummary(owner, platform)).status).toBe(200);

    const [stored] = await requestsFiledBy(platform.id);
    expect(stored).toMatchObject({ status: "approved", resolved_at: expect.any(Date) });
    expect((await auditOf(request.id)).map((e) => [e.org_id, e.action])).toEqual([
      [platform.id, "delegation_request.created"],
      [owner.id, "delegation_request.approved"],
    ]);
    expect((await auditOf(approved.body.id))[0]).toMatchObject({
      action: "delegation.created",
      details: { delegation_request_id: request.id },
    });

    for (const decision of ["approve", "deny"] as const) {
      const again = await decide(owner, request.id, decision);
      expect([again.status, again.body.status, again.body.code, again.body.request_status]).toEqual([
        409,
        409,
        "delegation_request_resolved",
        "approved",
      ]);
    }
    expect(await activeDelegations(owner.id, platform.id)).toBe(1);
    expect(await outboxOf(platform.id)).toHaveLength(1);
  });

  test("deny: 204, nothing delegated, a repeat is 409, and the grantee may ask again", async () => {
    const owner = await contentOwner();
    const platform = await partner();
    const request = (await fileRequest(platform, { domain: owner.domain })).body;
    const denied = await decide(owner, request.id, "deny");
    expect([denied.status, denied.body]).toEqual([204, ""]);
    expect((await requestsFiledBy(platform.id))[0]).toMatchObject({ status: "denied" });
    expect((await auditOf(request.id)).map((e) => e.action)).toEqual([
      "delegation_request.created",
      "delegation_request.denied",
    ]);
    for (const decision of ["approve", "deny"] as const) {
      const again = await decide(owner, request.id, decision);
      expect([again.status, again.body.status, again.body.code, again.body.request_status]).toEqual([
        409,
        409,
        "delegation_request_resolved",
        "denied",
      ]);
    }
    expect(await activeDelegations(owner.id, platform.id)).toBe(0);
    expect(await outboxOf(platform.id)).toEqual([]);
    expect((await fileRequest(platform, { domain: owner.domain })).status).toBe(201);
  });

  test("a grantor that no longer holds the domain cannot approve (409 stale); its new owner is asked afresh", async () => {
    const owner = await contentOwner();
    const platform = await partner();
    const asked = `news.${owner.domain}`;
    const request = (await fileRequest(platform, { domain: asked })).body;
    const { ctx } = await testRuntime();
    await ctx.sql`DELETE FROM domains WHERE org_id = ${owner.id}::uuid AND domain = ${owner.domain}`;
    const newOwner = await createTestOrg({ domain: owner.domain });

    const stale = await decide(owner, request.id, "approve");
    expect([stale.status, stale.body.code, stale.body.domain]).toEqual([409, "delegation_request_stale", asked]);
    expect(await activeDelegations(owner.id, platform.id)).toBe(0);
    expect((await requestsFiledBy(platform.id))[0]).toMatchObject({ status: "pending" });
    expect((await decide(owner, request.id, "deny")).status).toBe(204);
    const again = await fileRequest(platform, { domain: asked });
    expect([again.status, again.body.grantor_org_id]).toEqual([201, newOwner.id]);
  });

  test("only the grantor decides: the grantee is refused (403), any other organisation gets 404", async () => {
    const owner = await contentOwner();
    const platform = await partner();
    const request = (await fileRequest(platform, { domain: owner.domain })).body;
    const otherOwner = await contentOwner();
    for (const decision of ["approve", "deny"] as const) {
      const byGrantee = await decide(platform, request.id, decision);
      expect([byGrantee.status, byGrantee.body.code]).toEqual([403, "content_owner_only"]);
      const byOther = await decide(otherOwner, request.id, decision);
      expect([byOther.status, byOther.body.code]).toEqual([404, "delegation_request_not_found"]);
      const unknown = await decide(owner, crypto.randomUUID(), decision);
      expect([unknown.status, unknown.body.code]).toEqual([404, "delegation_request_not_found"]);
      const malformed = await decide(owner, "not-a-uuid", decision);
      expect([malformed.status, malformed.body.errors?.[0]?.path]).toEqual([400, "/id"]);
      const member = await memberOf(owner.id, "member");
      const byMember = await callIdentity("POST", `${path}/${request.id}/${decision}`, { session: member.session });
      expect([byMember.status, byMember.body.code]).toEqual([403, "role_required"]);
    }
    // Still pending, and the grantor's own admin decides.
    expect((await requestsFiledBy(platform.id))[0]?.status).toBe("pending");
    const admin = await memberOf(owner.id, "admin");
    const approved = await callIdentity("POST", `${path}/${request.id}/approve`, { session: admin.session });
    expect(approved.status).toBe(201);
    expect((await auditOf(request.id)).at(-1)).toMatchObject({
      action: "delegation_request.approved",
      actor_type: "user",
    });
  });
});

describe("expiry after 30 days (the service's clock set by the test)", () => {
  test("an approval after 30 days is 410 before the job has run; a day earlier it succeeds", async () => {
    const owner = await contentOwner();
    const [late, onTime] = [await partner(), await partner()];
    const filedAt = Date.now();
    const stale = (await fileRequest(late, { domain: owner.domain })).body;
    const fresh = (await fileRequest(onTime, { domain: owner.domain })).body;
    const after30Days = await appAt(new Date(Date.parse(stale.expires_at) + 1000));

    for (const decision of ["approve", "deny"] as const) {
      const res = await decide(owner, stale.id, decision, after30Days);
      expect([res.status, res.body.code]).toEqual([410, "delegation_request_expired"]);
    }
    // The job has not run: the row is still pending, yet no list shows it from then on.
    expect((await requestsFiledBy(late.id))[0]?.status).toBe("pending");
    const listed = await callIdentity("GET", path, { key: owner.key, app: after30Days });
    expect(idsOf(listed)).toEqual([]);
    expect(await activeDelegations(owner.id, late.id)).toBe(0);

    const after29Days = await appAt(new Date(filedAt + days(29)));
    expect((await decide(owner, fresh.id, "approve", after29Days)).status).toBe(201);
    expect(await outboxOf(late.id)).toEqual([]);
  });

  test("the expiry job marks requests past 30 days expired (with an audit entry); approval stays 410", async () => {
    const { ctx } = await testRuntime();
    const owner = await contentOwner();
    const platform = await partner();
    const request = (await fileRequest(platform, { domain: owner.domain })).body;
    const expiresAt = new Date(request.expires_at);

    // A tick before the expiry leaves it alone; the first tick at or after it marks it.
    await expireDelegationRequests(ctx.sql, new Date(expiresAt.getTime() - 1000));
    expect((await requestsFiledBy(platform.id))[0]?.status).toBe("pending");
    expect(await expireDelegationRequests(ctx.sql, new Date(expiresAt.getTime() + days(1)))).toBeGreaterThanOrEqual(1);
    expect((await requestsFiledBy(platform.id))[0]).toMatchObject({ status: "expired", resolved_at: expiresAt });
    expect((await auditOf(request.id)).at(-1)).toMatchObject({
      org_id: owner.id,
      action: "delegation_request.expired",
      actor_type: "system",
    });

    // Now even the real clock (still within the 30 days) answers 410.
    const res = await decide(owner, request.id, "approve");
    expect([res.status, res.body.code]).toEqual([410, "delegation_request_expired"]);
    // The grantee may ask again.
    expect((await fileRequest(platform, { domain: owner.domain })).status).toBe(201);
  });

  test("a request past 30 days no longer blocks a new one, even before the job runs", async () => {
    const owner = await contentOwner();
    const platform = await partner();
    const first = (await fileRequest(platform, { domain: owner.domain })).body;
    const later = await appAt(new Date(Date.parse(first.expires_at) + 1000));
    const second = await fileRequest(platform, { domain: owner.domain }, later);
    expect(second.status).toBe(201);
    expect((await requestsFiledBy(platform.id)).map((r) => [r.id, r.status])).toEqual([
      [first.id, "expired"],
      [second.body.id, "pending"],
    ]);
  });
});

describe("POST /delegation-requests/bulk", () => {
  test("answers each item in input order with its status, and a summary; one bad item changes no other", async () => {
    const platform = await partner();
    const [a, b, c, d, e] = [
      await contentOwner(),
      await contentOwner(),
      await contentOwner(),
      await contentOwner(),
      await contentOwner(),
    ];
    expect((await fileRequest(platform, { domain: b.domain })).status).toBe(201);
    expect((await grant(c, { grantee_org_id: platform.id })).status).toBe(201);
    const nobody = uniqueDomain("nobody");
    const items = [
      { domain: a.domain },
      { domain: nobody },
      { domain: b.domain },
      { domain: c.domain },
      { domain: `WWW.${a.domain}` },
      { domain: a.domain.toUpperCase() },
      { domain: "not a domain" },
      { domain: d.domain, scopes: ["identity:write"] },
      { scopes: ["telemetry:read"] },
      5,
      null,
      { domain: e.domain, scopes: ["telemetry:read"] },
      { domain: nobody },
      // Item 7 was refused for its own scopes: the same domain without them is filed on its own.
      { domain: d.domain },
      // Refused for its scopes, as it would be alone, before meeting item 0's request.
      { domain: a.domain, scopes: ["telemetry:write"] },
    ];
    const res = await callIdentity("POST", `${path}/bulk`, { key: platform.writer, body: items });
    expect(res.status).toBe(200);
    expect(
      res.body.items.map((item: { index: number; status: string; code?: string }) => [
        item.index,
        item.status,
        item.code,
      ]),
    ).toEqual([
      [0, "created", undefined],
      [1, "not_found", "verified_domain_not_found"],
      [2, "conflict", "delegation_request_pending"],
      [3, "conflict", "delegation_exists"],
      // a.domain already asked a's owner: its subdomain is the same pair.
      [4, "conflict", "delegation_request_pending"],
      // The same domain twice in one call: the second meets the request the first filed.
      [5, "conflict", "delegation_request_pending"],
      [6, "error", "invalid_domain"],
      [7, "error", "validation_failed"],
      [8, "error", "validation_failed"],
      [9, "error", "validation_failed"],
      [10, "error", "validation_failed"],
      [11, "created", undefined],
      [12, "not_found", "verified_domain_not_found"],
      [13, "created", undefined],
      [14, "error", "validation_failed"],
    ]);
    expect(res.body.summary).toEqual({ created: 3, not_found: 2, conflict: 4, error: 6 });
    expect(res.body.items[5].reason).toContain("item 0");
    expect(res.body.items[7].reason).toContain("identity:write cannot be delegated");
    expect(res.body.items[8].reason).toBe("/domain is required: a string");
    expect(res.body.items.map((item: { domain: string | null }) => item.domain)).toEqual(
      items.map((item) => (item && typeof item === "object" && "domain" in item ? item.domain : null)),
    );
    expect(res.body.items[0].delegation_request).toMatchObject({ grantor_org_id: a.id, status: "pending" });
    expect(res.body.items[11].delegation_request).toMatchObject({ grantor_org_id: e.id, status: "pending" });

    // Exactly the created ones exist and were announced, each to its grantor.
    const filed = await requestsFiledBy(platform.id);
    expect(
      filed
        .filter((r) => r.status === "pending")
        .map((r) => r.grantor_org_id)
        .sort(),
    ).toEqual([a.id, b.id, d.id, e.id].sort());
    for (const [org, count] of [
      [a, 1],
      [b, 1],
      [d, 1],
      [e, 1],
    ] as const) {
      expect((await outboxOf(org.id)).filter((row) => row.event_type === "delegation_request.created")).toHaveLength(
        count,
      );
    }
  });

  test("an empty array, or more than 100 items, is 400 naming the limit, and nothing is filed", async () => {
    const platform = await partner();
    const owner = await contentOwner();
    const bulk = (body: unknown) => callIdentity("POST", `${path}/bulk`, { key: platform.writer, body });
    const empty = await bulk([]);
    expect([empty.status, empty.body.code]).toEqual([400, "validation_failed"]);
    expect(empty.body.errors[0].message).toContain("1");
    const tooMany = await bulk(Array.from({ length: 101 }, () => ({ domain: owner.domain })));
    expect([tooMany.status, tooMany.body.code]).toEqual([400, "validation_failed"]);
    expect(tooMany.body.errors[0].message).toContain("100");
    expect((await bulk({ domain: owner.domain })).status).toBe(400);
    expect(await requestsFiledBy(platform.id)).toEqual([]);

    // 100 is allowed: one created, 99 conflicts with it.
    const hundred = await bulk(Array.from({ length: 100 }, () => ({ domain: owner.domain })));
    expect([hundred.status, hundred.body.summary]).toEqual([200, { created: 1, not_found: 0, conflict: 99, error: 0 }]);
  }, 30_000);
});

describe("races", () => {
  test("two concurrent approvals of one request: exactly one 201 and one 409", async () => {
    const owner = await contentOwner();
    const platform = await partner();
    const request = (await fileRequest(platform, { domain: owner.domain })).body;
    const results = await Promise.all([decide(owner, request.id, "approve"), decide(owner, request.id, "approve")]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(results.find((r) => r.status === 409)?.body.code).toBe("delegation_request_resolved");
    expect(await activeDelegations(owner.id, platform.id)).toBe(1);
    expect((await outboxOf(platform.id)).map((row) => row.event_type)).toEqual(["delegation.created"]);
  });

  test("an approval racing a denial: exactly one wins", async () => {
    const owner = await contentOwner();
    const platform = await partner();
    const request = (await fileRequest(platform, { domain: owner.domain })).body;
    const [approved, denied] = await Promise.all([
      decide(owner, request.id, "approve"),
      decide(owner, request.id, "deny"),
    ]);
    expect([approved.status, denied.status].sort()).toEqual(approved.status === 201 ? [201, 409] : [204, 409]);
    expect(await activeDelegations(owner.id, platform.id)).toBe(approved.status === 201 ? 1 : 0);
  });

  test("a grant racing a request for the same pair leaves exactly one active delegation and nothing pending", async () => {
    for (let round = 0; round < 3; round++) {
      const owner = await contentOwner();
      const platform = await partner();
      const [granted, requested] = await Promise.all([
        grant(owner, { grantee_org_id: platform.id }),
        fileRequest(platform, { domain: owner.domain }),
      ]);
      expect(granted.status).toBe(201);
      // Either the request came first (and the grant resolved it) or it met the delegation.
      expect([201, 409]).toContain(requested.status);
      if (requested.status === 409) expect(requested.body.code).toBe("delegation_exists");
      expect(await activeDelegations(owner.id, platform.id)).toBe(1);
      expect((await requestsFiledBy(platform.id)).filter((r) => r.status === "pending")).toEqual([]);
    }
  });

  test("a grant racing an approval of the pair's request: one 201, one 409, one active delegation", async () => {
    const owner = await contentOwner();
    const platform = await partner();
    const request = (await fileRequest(platform, { domain: owner.domain })).body;
    const [granted, approved] = await Promise.all([
      grant(owner, { grantee_org_id: platform.id }),
      decide(owner, request.id, "approve"),
    ]);
    expect([granted.status, approved.status].sort()).toEqual([201, 409]);
    expect(await activeDelegations(owner.id, platform.id)).toBe(1);
    expect((await requestsFiledBy(platform.id))[0]?.status).toBe("approved");
    expect((await outboxOf(platform.id)).map((row) => row.event_type)).toEqual(["delegation.created"]);
  });

  test("parallel requests for one pair: exactly one is filed", async () => {
    const owner = await contentOwner();
    const platform = await partner();
    const results = await Promise.all(Array.from({ length: 5 }, () => fileRequest(platform, { domain: owner.domain })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    expect(await requestsFiledBy(platform.id)).toHaveLength(1);
    expect(await outboxOf(owner.id)).toHaveLength(1);
  });
});

// The embedded engine is one session: a transaction held open would stop the request too.
test.skipIf(!testServerUrl)(
  "an approval meeting the grantor's removal of the domain waits for it and is then refused as stale",
  async () => {
    const { ctx } = await testRuntime();
    const owner = await contentOwner();
    const platform = await partner();
    const request = (await fileRequest(platform, { domain: owner.domain })).body;
    const removal = await ctx.sql.reserve();
    try {
      await removal`BEGIN`;
      await removal`DELETE FROM domains WHERE org_id = ${owner.id}::uuid AND domain = ${owner.domain}`;
      const approving = decide(owner, request.id, "approve");
      await untilWaitingOnLocks(ctx.sql);
      await removal`COMMIT`;
      const approved = await approving;
      expect([approved.status, approved.body.code]).toEqual([409, "delegation_request_stale"]);
      expect(await activeDelegations(owner.id, platform.id)).toBe(0);
    } finally {
      removal.release();
    }
  },
  30_000,
);
