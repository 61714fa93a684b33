import { describe, expect, test } from "bun:test";
import type { Principal } from "../../src/core/caller.ts";
import type { Sql } from "../../src/db/sql.ts";
import { grantDelegation, revokeDelegation } from "../../src/modules/delegations/service.ts";
import { registerDomain, verifyDomain } from "../../src/modules/domains/service.ts";
import { resolveOwnerScope } from "../../src/modules/reads/access.ts";
import { insertEvents } from "../support/events.ts";
import { createTestOrg, type TestOrg, testChange, uniqueDomain } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { figuresOf } from "../support/reads-reference.ts";
import { rejectionOf } from "../support/rejection.ts";
import { testRuntime } from "../support/runtime.ts";

const ownerPaths = ["summary", "events", "urls", "timeseries", "export"];

/** An owner with two events on its domain (one on a subdomain), reported by a platform. */
async function ownerWithEvents(): Promise<{ owner: TestOrg; reporter: TestOrg }> {
  const { ctx } = await testRuntime();
  const owner = await createTestOrg();
  const reporter = await createTestOrg({ type: "platform" });
  const session = crypto.randomUUID();
  await insertEvents(ctx.sql, [
    {
      event_time: new Date("2026-03-01T10:00:00Z"),
      org_id: reporter.id,
      content_url: `https://${owner.domain}/a`,
      session_id: session,
    },
    {
      event_time: new Date("2026-03-01T10:05:00Z"),
      org_id: reporter.id,
      content_url: `https://news.${owner.domain}/b`,
      session_id: session,
      agent_id: "bot",
    },
  ]);
  return { owner, reporter };
}

async function expectForbidden(key: string, query: string, code: string) {
  for (const path of ownerPaths) {
    const res = await call("GET", `/content-owners/${path}?${query}`, { key });
    expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status: 403, code });
    expect(res.headers.get("content-type")).toContain("application/problem+json");
  }
}

describe("content-owner read access", () => {
  test("an owner key sees its own domains (subdomains included) and another owner sees none of it", async () => {
    const { owner } = await ownerWithEvents();
    const other = await createTestOrg();
    const own = await call("GET", "/content-owners/summary", { key: owner.key });
    expect(own.status).toBe(200);
    expect(own.body.organization_id).toBe(owner.id);
    expect(own.body.domains).toEqual([owner.domain]);
    expect(own.body.total_events).toBe(2);
    expect(own.body.total_sessions).toBe(1);
    const theirs = await call("GET", "/content-owners/summary", { key: other.key });
    expect(theirs.body.total_events).toBe(0);
    const theirEvents = await call("GET", "/content-owners/events", { key: other.key });
    expect(figuresOf(theirEvents.body)).toEqual({ items: [], total: 0, limit: 100, offset: 0 });
  });

  test("domain narrows to a verified domain or its subdomain; any other domain is 403", async () => {
    const { owner } = await ownerWithEvents();
    const other = await createTestOrg();
    const narrowed = await call("GET", `/content-owners/summary?domain=news.${owner.domain}`, { key: owner.key });
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.domains).toEqual([`news.${owner.domain}`]);
    expect(narrowed.body.total_events).toBe(1);
    await expectForbidden(owner.key, `domain=${other.domain}`, "domain_not_bound");
    await expectForbidden(owner.key, "domain=example.com", "domain_not_bound");
  });

  test("domain is matched in canonical form (case, trailing dot, IDN); a value that is no host name is 400", async () => {
    const { ctx } = await testRuntime();
    const { owner, reporter } = await ownerWithEvents();
    await insertEvents(ctx.sql, [
      {
        event_time: new Date("2026-03-01T11:00:00Z"),
        org_id: reporter.id,
        content_url: `https://bücher.${owner.domain}/c`,
      },
    ]);
    for (const domain of [`b%C3%BCcher.${owner.domain}`, `B%C3%9CCHER.${owner.domain?.toUpperCase()}.`]) {
      const res = await call("GET", `/content-owners/summary?domain=${domain}`, { key: owner.key });
      expect({ domain, status: res.status, domains: res.body.domains, total: res.body.total_events }).toEqual({
        domain,
        status: 200,
        domains: [`xn--bcher-kva.${owner.domain}`],
        total: 1,
      });
    }
    for (const domain of ["", `_.${owner.domain}`, `%25.${owner.domain}`, `https://${owner.domain}/`]) {
      const res = await call("GET", `/content-owners/events?domain=${domain}`, { key: owner.key });
      expect({ domain, status: res.status, fields: res.body.errors?.map((e: { path: string }) => e.path) }).toEqual({
        domain,
        status: 400,
        fields: ["/domain"],
      });
    }
  });

  test("a subdomain verified by another owner belongs to both owners; neither sees the other's other hosts", async () => {
    const { ctx } = await testRuntime();
    const parent = uniqueDomain();
    const outer = await createTestOrg({ domain: parent });
    const inner = await createTestOrg({ domain: `a.${parent}` });
    const reporter = await createTestOrg({ type: "platform" });
    const session = crypto.randomUUID();
    const at = (minute: number) => new Date(Date.UTC(2026, 2, 1, 10, minute));
    await insertEvents(ctx.sql, [
      { event_time: at(0), org_id: reporter.id, content_url: `https://${parent}/x`, session_id: session },
      { event_time: at(1), org_id: reporter.id, content_url: `https://a.${parent}/y`, session_id: session },
      { event_time: at(2), org_id: reporter.id, content_url: `https://deep.a.${parent}/z`, session_id: session },
    ]);
    const urlsOf = async (key: string, query = "") =>
      (await call("GET", `/content-owners/urls?${query}`, { key })).body.items
        .map((i: { content_url: string }) => i.content_url)
        .sort();
    expect(await urlsOf(outer.key)).toEqual([
      `https://a.${parent}/y`,
      `https://deep.a.${parent}/z`,
      `https://${parent}/x`,
    ]);
    expect(await urlsOf(inner.key)).toEqual([`https://a.${parent}/y`, `https://deep.a.${parent}/z`]);
    // The outer owner may narrow to the inner owner's subdomain; the inner owner may not widen to the parent.
    expect(await urlsOf(outer.key, `domain=a.${parent}`)).toEqual(await urlsOf(inner.key));
    await expectForbidden(inner.key, `domain=${parent}`, "domain_not_bound");
    const innerSummary = await call("GET", "/content-owners/summary", { key: inner.key });
    expect(innerSummary.body).toMatchObject({ total_events: 2, total_sessions: 1, domains: [`a.${parent}`] });
  });

  test("a key without telemetry:read is 403 and a missing or unknown key is 401", async () => {
    const { owner } = await ownerWithEvents();
    await expectForbidden(await owner.keyWith(["telemetry:write", "identity:read"]), "", "missing_scope");
    expect((await call("GET", "/content-owners/summary")).status).toBe(401);
    expect((await call("GET", "/content-owners/summary", { key: `svc_pub_${"x".repeat(43)}` })).status).toBe(401);
    expect((await call("GET", "/agent/summary", { key: await owner.keyWith([]) })).status).toBe(403);
  });

  test("a platform key reads an owner's data only through an active delegation granting telemetry:read", async () => {
    const { ctx } = await testRuntime();
    const { owner } = await ownerWithEvents();
    const platform = await createTestOrg({ type: "platform" });
    const bystander = await createTestOrg({ type: "platform" });
    const query = `delegated_from=${owner.id}`;

    await expectForbidden(platform.key, "", "delegation_required");
    await expectForbidden(platform.key, query, "no_active_delegation");

    const delegation = await grantDelegation(ctx.sql, {
      grantorOrgId: owner.id,
      granteeOrgId: platform.id,
      ...testChange(),
    });
    for (const path of ["summary", "events", "urls", "timeseries"]) {
      const asOwner = await call("GET", `/content-owners/${path}`, { key: owner.key });
      const delegated = await call("GET", `/content-owners/${path}?${query}`, { key: platform.key });
      expect({ path, status: delegated.status, body: figuresOf(delegated.body) }).toEqual({
        path,
        status: 200,
        body: figuresOf(asOwner.body),
      });
    }
    const narrowed = await call("GET", `/content-owners/summary?${query}&domain=news.${owner.domain}`, {
      key: platform.key,
    });
    expect(narrowed.body.total_events).toBe(1);
    await expectForbidden(platform.key, `${query}&domain=${platform.id.slice(0, 8)}.example.net`, "domain_not_bound");

    // Another organisation's key gains nothing from it, and neither does a key lacking the scope.
    await expectForbidden(bystander.key, query, "no_active_delegation");
    await expectForbidden(await platform.keyWith(["telemetry:write"]), query, "missing_scope");

    await revokeDelegation(ctx.sql, { id: delegation.id, ...testChange() });
    await expectForbidden(platform.key, query, "no_active_delegation");
  });

  test("a delegated read checks its delegation and reads the grantor's domains in one statement", async () => {
    const { ctx } = await testRuntime();
    const owner = await createTestOrg({ domain: `b-${uniqueDomain()}` });
    const first = `a-${uniqueDomain()}`;
    await registerDomain(ctx.sql, owner.id, first);
    await verifyDomain(ctx.sql, owner.id, first, "operator");
    await registerDomain(ctx.sql, owner.id, uniqueDomain("unverified"));
    const platform = await createTestOrg({ type: "platform" });
    const delegation = await grantDelegation(ctx.sql, {
      grantorOrgId: owner.id,
      granteeOrgId: platform.id,
      ...testChange(),
    });
    // Every statement the resolution sends (none builds a fragment).
    let statements = 0;
    const counted = new Proxy(ctx.sql, {
      apply(target, self, args) {
        statements++;
        return Reflect.apply(target, self, args);
      },
    }) as Sql;
    const principal: Principal = {
      keyId: "test",
      orgId: platform.id,
      orgType: "platform",
      scopes: new Set(["telemetry:read"]),
      verifiedDomains: [],
    };
    expect(await resolveOwnerScope(counted, principal, { delegated_from: owner.id.toUpperCase() })).toEqual({
      view: "owner",
      orgId: owner.id,
      domains: [first, owner.domain as string],
    });
    expect(statements).toBe(1);

    await revokeDelegation(ctx.sql, { id: delegation.id, ...testChange() });
    statements = 0;
    const refused = await rejectionOf(resolveOwnerScope(counted, principal, { delegated_from: owner.id }));
    expect(refused).toMatchObject({ code: "no_active_delegation" });
    expect(statements).toBe(1);
  });

  test("a delegation that does not grant telemetry:read is refused", async () => {
    const { ctx } = await testRuntime();
    const { owner } = await ownerWithEvents();
    const platform = await createTestOrg({ type: "agent" });
    // The service refuses empty grants; a row without the scope can still exist (e.g. future scopes).
    await ctx.sql`INSERT INTO delegations (grantor_org_id, grantee_org_id, scopes) VALUES (${owner.id}, ${platform.id}, '{}')`;
    await expectForbidden(platform.key, `delegated_from=${owner.id}`, "no_active_delegation");
  });

  test("a content-owner key cannot read another owner through delegated_from", async () => {
    const { owner } = await ownerWithEvents();
    const other = await createTestOrg();
    await expectForbidden(other.key, `delegated_from=${owner.id}`, "delegation_not_allowed");
  });
});

describe("agent dashboard read access", () => {
  test("/agent/* covers exactly the events the caller's organisation reported, optionally one agent", async () => {
    const { owner, reporter } = await ownerWithEvents();
    const mine = await call("GET", "/agent/summary", { key: reporter.key });
    expect(mine.status).toBe(200);
    expect(mine.body.organization_id).toBe(reporter.id);
    expect(mine.body.total_events).toBe(2);
    expect(mine.body.agents).toEqual([
      { platform_id: reporter.id, agent_id: null, event_count: 1, session_count: 1 },
      { platform_id: reporter.id, agent_id: "bot", event_count: 1, session_count: 1 },
    ]);
    const bot = await call("GET", "/agent/events?agent_id=bot", { key: reporter.key });
    expect(bot.body.total).toBe(1);
    expect(bot.body.items[0].content_url).toBe(`https://news.${owner.domain}/b`);
    const stranger = await createTestOrg({ type: "platform" });
    expect((await call("GET", "/agent/summary", { key: stranger.key })).body.total_events).toBe(0);
    // The owner did not report them, so its agent view is empty too.
    expect((await call("GET", "/agent/urls", { key: owner.key })).body.total).toBe(0);
  });
});
