import { describe, expect, test } from "bun:test";
import { createApp } from "../../src/app.ts";
import { createTestOrg, uniqueDomain } from "../support/fixtures.ts";
import { callIdentity, identityTestApp, signIn } from "../support/identity.ts";
import { testRuntime } from "../support/runtime.ts";
import { turnWatchingClient } from "../support/statement-turns.ts";

const path = "/api/v1/identity/organizations";

describe("POST /organizations", () => {
  test("a name is one line: a line break or another control character is refused at /name", async () => {
    const user = await signIn();
    for (const name of ["Acme\r\nURGENT: visit https://evil.example", "Acme\u0007", "Acme\u2028News"]) {
      const res = await callIdentity("POST", path, {
        session: user.session,
        body: { name, org_type: "content_owner", domain: uniqueDomain() },
      });
      expect([res.status, res.body.errors?.[0]?.path]).toEqual([400, "/name"]);
    }
    expect((await callIdentity("GET", path, { session: user.session })).body.total).toBe(0);
  });

  test("a content owner is self-serve: caller becomes owner, domain registered not verified", async () => {
    const user = await signIn();
    const domain = uniqueDomain();
    const res = await callIdentity("POST", path, {
      session: user.session,
      body: { name: "Acme News", org_type: "content_owner", domain: `${domain.toUpperCase()}.` },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: "Acme News", org_type: "content_owner", role: "owner" });
    expect(res.body.domains).toEqual([{ domain, state: "registered" }]);

    const mine = await callIdentity("GET", path, { session: user.session });
    expect(mine.status).toBe(200);
    expect(mine.body.items.map((o: { id: string }) => o.id)).toEqual([res.body.id]);
    expect(mine.body).toMatchObject({ total: 1, limit: 50, offset: 0 });

    const audit = await callIdentity("GET", `/api/v1/identity/audit?org_id=${res.body.id}`, { session: user.session });
    expect(audit.status).toBe(200);
    expect(audit.body.items[0]).toMatchObject({
      org_id: res.body.id,
      action: "organization.created",
      actor: { type: "user", id: user.userId, label: user.email },
      target: { type: "organization", id: res.body.id },
    });
  });

  test("platform and agent answer 403 pointing to their access-request endpoint", async () => {
    const user = await signIn();
    for (const orgType of ["platform", "agent"]) {
      const res = await callIdentity("POST", path, {
        session: user.session,
        body: { name: "X", org_type: orgType, domain: uniqueDomain() },
      });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe("access_request_required");
      expect(res.body.access_request_endpoint).toBe(`/api/v1/identity/${orgType}-access-requests`);
    }
    expect((await callIdentity("GET", path, { session: user.session })).body.total).toBe(0);
  });

  test("refuses missing credentials and API keys (session only)", async () => {
    const body = { name: "X", org_type: "content_owner", domain: uniqueDomain() };
    expect((await callIdentity("POST", path, { body })).status).toBe(401);
    const org = await createTestOrg();
    const admin = await org.keyWith(["identity:read", "identity:write", "partner:provision"]);
    for (const key of [org.key, admin]) {
      const res = await callIdentity("POST", path, { key, body });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe("session_required");
      expect((await callIdentity("GET", path, { key })).status).toBe(403);
    }
    expect((await callIdentity("GET", path)).status).toBe(401);
  });

  test("bad bodies are 400 and store nothing", async () => {
    const user = await signIn();
    const bad = [
      {},
      { name: "", org_type: "content_owner", domain: uniqueDomain() },
      { name: "X", org_type: "publisher", domain: uniqueDomain() },
      { name: "X", org_type: "content_owner" },
      { name: "X", org_type: "content_owner", domain: "127.0.0.1" },
      { name: "X", org_type: "content_owner", domain: "localhost" },
      { name: "X", org_type: "content_owner", domain: "co.uk" },
      { name: "X", org_type: "content_owner", domain: "https://example.com/x" },
      { name: 5, org_type: "content_owner", domain: uniqueDomain() },
    ];
    for (const body of bad) {
      const res = await callIdentity("POST", path, { session: user.session, body });
      expect(res.status).toBe(400);
      expect(res.body.errors.length).toBeGreaterThan(0);
    }
    expect((await callIdentity("GET", path, { session: user.session })).body.total).toBe(0);
  });

  test("lists only the caller's organisations, paged", async () => {
    const user = await signIn();
    const other = await signIn();
    for (const name of ["A", "B", "C"]) {
      await callIdentity("POST", path, {
        session: user.session,
        body: { name, org_type: "content_owner", domain: uniqueDomain() },
      });
    }
    await callIdentity("POST", path, {
      session: other.session,
      body: { name: "Z", org_type: "content_owner", domain: uniqueDomain() },
    });
    const page = await callIdentity("GET", `${path}?limit=2&offset=1`, { session: user.session });
    expect(page.body.total).toBe(3);
    expect(page.body.items.map((o: { name: string }) => o.name)).toEqual(["B", "C"]);
    expect((await callIdentity("GET", `${path}?limit=0`, { session: user.session })).status).toBe(400);
    expect((await callIdentity("GET", `${path}?limit=101`, { session: user.session })).status).toBe(400);
  });

  test("counts the caller's organisations beside the page, not after its answer", async () => {
    const user = await signIn();
    await callIdentity("POST", path, {
      session: user.session,
      body: { name: "A", org_type: "content_owner", domain: uniqueDomain() },
    });
    const { db } = await testRuntime();
    const { sql, secondInFirstsTurn, forget } = turnWatchingClient(
      db.url,
      "FROM organization_members m JOIN organizations o",
      "SELECT count(*)::int AS n FROM organization_members",
    );
    try {
      const app = createApp({ ...(await identityTestApp()).ctx, sql });
      const list = () => callIdentity("GET", path, { session: user.session, app });
      expect((await list()).status).toBe(200);
      forget();
      const page = await list();
      expect({ total: page.body.total, names: page.body.items.map((o: { name: string }) => o.name) }).toEqual({
        total: 1,
        names: ["A"],
      });
      expect(secondInFirstsTurn()).toEqual([true]);
    } finally {
      await sql.end();
    }
  });
});

describe("GET /audit", () => {
  test("is for owners and admins by session; keys, strangers and members are refused", async () => {
    const owner = await signIn();
    const created = await callIdentity("POST", path, {
      session: owner.session,
      body: { name: "Audited", org_type: "content_owner", domain: uniqueDomain() },
    });
    const orgId = created.body.id;
    const stranger = await signIn();
    const refused = await callIdentity("GET", `/api/v1/identity/audit?org_id=${orgId}`, { session: stranger.session });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("not_a_member");
    expect((await callIdentity("GET", `/api/v1/identity/audit?org_id=${orgId}`)).status).toBe(401);
    const org = await createTestOrg();
    const key = await org.keyWith(["identity:read", "identity:write"]);
    const byKey = await callIdentity("GET", "/api/v1/identity/audit", { key });
    expect(byKey.status).toBe(403);
    expect(byKey.body.code).toBe("session_required");
    // With one organisation the org_id may be left out.
    const implicit = await callIdentity("GET", "/api/v1/identity/audit", { session: owner.session });
    expect(implicit.status).toBe(200);
    expect(implicit.body.total).toBe(1);
    const none = await callIdentity("GET", "/api/v1/identity/audit", { session: stranger.session });
    expect(none.status).toBe(422);
    expect(none.body.code).toBe("organization_required");
  });
});

describe("GET /organizations/:id", () => {
  test("shows the organisation and its domains to members and its own identity:read keys", async () => {
    const owner = await signIn();
    const domain = uniqueDomain();
    const created = await callIdentity("POST", path, {
      session: owner.session,
      body: { name: "Detail Co", org_type: "content_owner", domain },
    });
    const id = created.body.id;
    const res = await callIdentity("GET", `${path}/${id}`, { session: owner.session });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, name: "Detail Co", org_type: "content_owner", role: "owner" });
    expect(res.body.domains).toEqual([expect.objectContaining({ domain, state: "registered" })]);

    const org = await createTestOrg();
    const byKey = await callIdentity("GET", `${path}/${org.id}`, { key: org.key });
    expect(byKey.status).toBe(200);
    expect(byKey.body).toMatchObject({ id: org.id, role: null });
    expect(byKey.body.domains[0]).toMatchObject({ domain: org.domain, state: "verified", verification: null });

    expect((await callIdentity("GET", `${path}/${id}`, { key: org.key })).status).toBe(403);
    expect(
      (await callIdentity("GET", `${path}/${org.id}`, { key: await org.keyWith(["telemetry:read"]) })).status,
    ).toBe(403);
    expect((await callIdentity("GET", `${path}/${id}`, { session: (await signIn()).session })).status).toBe(403);
    expect((await callIdentity("GET", `${path}/${id}`)).status).toBe(401);
    expect((await callIdentity("GET", `${path}/not-a-uuid`, { session: owner.session })).status).toBe(400);
  });
});

describe("OpenAPI", () => {
  test("documents identity request bodies as JSON with their schemas", async () => {
    const doc = await callIdentity("GET", "/openapi/json");
    const body = doc.body.paths["/api/v1/identity/organizations"].post.requestBody;
    expect(Object.keys(body.content)).toEqual(["application/json"]);
    expect(body.content["application/json"].schema.properties.org_type).toBeDefined();
    const verify = doc.body.paths["/api/v1/identity/domains/{domain}/verify"].post;
    expect(verify.requestBody.content["application/json"].schema.required).toEqual(["method"]);
    expect(doc.body.paths["/resolve"].get).toBeDefined();
  });
});
