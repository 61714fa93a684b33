import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { defaultScopes } from "../../src/core/scopes.ts";
import { accessPlugin } from "../../src/http/access.ts";
import { httpPlugin } from "../../src/http/plugin.ts";
import { KeyAuthenticator } from "../../src/modules/keys/authenticator.ts";
import { createApiKey, listApiKeys, revokeApiKey } from "../../src/modules/keys/service.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { rejectionOf } from "../support/rejection.ts";
import { testRuntime } from "../support/runtime.ts";

/** One route per scope, on the real auth plugin, answering with the resolved principal. */
async function scopedApp() {
  const { ctx } = await testRuntime();
  const who = ({ principal }: { principal: { orgId: string; orgType: string; scopes: ReadonlySet<string> } }) => ({
    org_id: principal.orgId,
    org_type: principal.orgType,
    scopes: [...principal.scopes],
  });
  return new Elysia()
    .use(
      httpPlugin(ctx, {
        allowedMethods: () => [],
        accessOf: () => undefined,
        bodyOf: () => undefined,
        shedsWhenFull: () => false,
        integerQueryOf: () => [],
      }),
    )
    .use(accessPlugin(ctx))
    .get("/any", who, { key: true })
    .get("/read", who, { key: "telemetry:read" })
    .get("/write", who, { key: "telemetry:write" })
    .get("/identity-read", who, { key: "identity:read" })
    .get("/identity-write", who, { key: "identity:write" })
    .get("/provision", who, { key: "partner:provision" });
}

async function get(path: string, key?: string) {
  const app = await scopedApp();
  const response = await app.handle(
    new Request(`http://test.local${path}`, { headers: key === undefined ? {} : { "x-api-key": key } }),
  );
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

describe("API key rules", () => {
  test("rule 1: scopes omitted or null grant telemetry:read, telemetry:write, identity:read", async () => {
    const org = await createTestOrg();
    const omitted = await createApiKey((await testRuntime()).ctx.sql, { orgId: org.id });
    for (const key of [org.key, omitted.key]) {
      for (const path of ["/read", "/write", "/identity-read"]) expect((await get(path, key)).status).toBe(200);
      expect((await get("/any", key)).body.scopes).toEqual([...defaultScopes]);
    }
  });

  test("rule 2: an explicit empty list grants nothing", async () => {
    const org = await createTestOrg();
    const key = await org.keyWith([]);
    expect((await get("/any", key)).body.scopes).toEqual([]);
    for (const path of ["/read", "/write", "/identity-read", "/identity-write", "/provision"]) {
      const res = await get(path, key);
      expect(res.status).toBe(403);
      expect(res.body.code).toBe("missing_scope");
    }
  });

  test("rule 3: defaults exclude identity:write and partner:provision", async () => {
    const org = await createTestOrg({ type: "platform" });
    expect((await get("/identity-write", org.key)).status).toBe(403);
    expect((await get("/provision", org.key)).status).toBe(403);
  });

  test("rule 4: listed scopes are exactly the effective permissions", async () => {
    const org = await createTestOrg({ type: "agent" });
    const key = await org.keyWith(["telemetry:write", "identity:write"]);
    expect((await get("/write", key)).status).toBe(200);
    expect((await get("/identity-write", key)).status).toBe(200);
    expect((await get("/read", key)).status).toBe(403);
    const listed = await listApiKeys((await testRuntime()).ctx.sql, org.id);
    const record = listed.find((k) => k.scopes.includes("identity:write"));
    expect(record?.scopes).toEqual(["telemetry:write", "identity:write"]);
    expect((await get("/any", key)).body.scopes).toEqual(["telemetry:write", "identity:write"]);
  });

  test("rule 4: a key row without scope metadata cannot exist", async () => {
    const org = await createTestOrg();
    const { ctx } = await testRuntime();
    expect(String(await rejectionOf(ctx.sql`UPDATE api_keys SET scopes = NULL WHERE org_id = ${org.id}`))).toContain(
      "violates",
    );
  });

  test("rule 5: missing key → 401, unrecognised key → 401, missing scope → 403", async () => {
    const missing = await get("/read");
    expect(missing.status).toBe(401);
    expect(missing.body.code).toBe("unauthorized");
    expect((await get("/read", "not-a-key")).status).toBe(401);
    expect((await get("/read", `svc_pub_${"A".repeat(43)}`)).status).toBe(401);
    const org = await createTestOrg();
    const tampered = `${org.key.slice(0, -1)}${org.key.endsWith("A") ? "B" : "A"}`;
    expect((await get("/read", tampered)).status).toBe(401);
    const readOnly = await org.keyWith(["telemetry:read"]);
    const res = await get("/write", readOnly);
    expect(res.status).toBe(403);
    expect(res.body.required_scope).toBe("telemetry:write");
  });

  test("key prefixes follow the organisation type", async () => {
    expect((await createTestOrg({ type: "content_owner" })).key).toStartWith("svc_pub_");
    expect((await createTestOrg({ type: "platform" })).key).toStartWith("svc_pk_");
    expect((await createTestOrg({ type: "agent" })).key).toStartWith("svc_pk_");
  });

  test("the principal carries the organisation and its verified domains", async () => {
    const org = await createTestOrg();
    const { ctx } = await testRuntime();
    const principal = await ctx.keys.authenticate(org.key);
    expect(principal.orgId).toBe(org.id);
    expect(principal.orgType).toBe("content_owner");
    expect(principal.verifiedDomains).toEqual([org.domain as string]);
  });

  test("only a hash of the key is stored", async () => {
    const org = await createTestOrg();
    const { ctx } = await testRuntime();
    const rows = await ctx.sql`SELECT * FROM api_keys WHERE org_id = ${org.id}`;
    expect(JSON.stringify(rows)).not.toContain(org.key.slice(20));
  });
});

describe("revocation", () => {
  test("a revoked key is refused with 401 (immediately when revoked through this process)", async () => {
    const org = await createTestOrg();
    const { ctx } = await testRuntime();
    expect((await get("/read", org.key)).status).toBe(200);
    const principal = await ctx.keys.authenticate(org.key);
    await revokeApiKey(ctx.sql, principal.keyId);
    ctx.keys.forget({ keyId: principal.keyId });
    const res = await get("/read", org.key);
    expect(res.status).toBe(401);
    expect(res.body.detail).toContain("revoked");
  });

  test("elsewhere, a cached key stays valid only until its cache entry expires", async () => {
    const org = await createTestOrg();
    const { ctx } = await testRuntime();
    const cached = new KeyAuthenticator(ctx.sql, ctx.log, 300);
    const principal = await cached.authenticate(org.key);
    await revokeApiKey(ctx.sql, principal.keyId);
    // Within the TTL the cached principal is served without a database round trip …
    expect((await cached.authenticate(org.key)).keyId).toBe(principal.keyId);
    // … and an authenticator whose cache has expired (TTL 0) sees the revocation.
    const uncached = new KeyAuthenticator(ctx.sql, ctx.log, 0);
    expect(await rejectionOf(uncached.authenticate(org.key))).toMatchObject({ status: 401 });
  });

  test("a lookup under way when an invalidation arrives is answered but not kept", async () => {
    const org = await createTestOrg();
    const { ctx } = await testRuntime();
    const keys = new KeyAuthenticator(ctx.sql, ctx.log, 300);
    // The lookup has been sent but not answered when the change is announced: it may
    // have read the key before the change committed.
    const underWay = keys.authenticate(org.key);
    keys.forget({ orgId: crypto.randomUUID() });
    const principal = await underWay;
    expect(principal.orgId).toBe(org.id);
    // Revoked without an announcement: only a key that was not kept sees it.
    await revokeApiKey(ctx.sql, principal.keyId);
    expect(await rejectionOf(keys.authenticate(org.key))).toMatchObject({ status: 401 });
  });

  test("requests after an invalidation do not join a lookup that began before it", async () => {
    const org = await createTestOrg();
    const { ctx } = await testRuntime();
    const keys = new KeyAuthenticator(ctx.sql, ctx.log, 300);
    let lookups = 0;
    const countLookup = () => {
      lookups++;
    };
    const before = [keys.authenticate(org.key, countLookup), keys.authenticate(org.key, countLookup)];
    expect(lookups).toBe(1);
    keys.forget({ orgId: org.id });
    const after = keys.authenticate(org.key, countLookup);
    expect(lookups).toBe(2);
    for (const principal of await Promise.all([...before, after])) expect(principal.orgId).toBe(org.id);
    // The lookup begun after the invalidation is kept.
    await keys.authenticate(org.key, countLookup);
    expect(lookups).toBe(2);
  });
});
