import { describe, expect, test } from "bun:test";
import { createApp } from "../../src/app.ts";
import { identityEventTypes } from "../../src/modules/outbox/service.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { callApp } from "../support/http.ts";
import { buildIdentityApp, callIdentity, memberOf } from "../support/identity.ts";
import { testRuntime } from "../support/runtime.ts";

const path = "/api/v1/identity/webhooks";
const hookUrl = (label = "hooks") => `https://${label}-${crypto.randomUUID().slice(0, 8)}.example.com/webhooks`;

async function writerOf(type: "content_owner" | "platform" = "content_owner") {
  const org = await createTestOrg({ type });
  return { org, key: await org.keyWith(["identity:read", "identity:write"]) };
}

async function storedEndpoints(orgId: string) {
  const { ctx } = await testRuntime();
  const rows = await ctx.sql<{ id: string; secret_ciphertext: Uint8Array; status: string }[]>`
    SELECT id, secret_ciphertext, status FROM webhook_endpoints WHERE org_id = ${orgId}::uuid`;
  return [...rows];
}

describe("POST /webhooks", () => {
  test("answers 201 with a whsec_ secret shown once and stored only encrypted; reads never show it", async () => {
    const { org, key } = await writerOf("platform");
    const url = hookUrl();
    const created = await callIdentity("POST", path, {
      key,
      body: { url, event_types: ["delegation.created", "delegation.revoked"] },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("cache-control")).toBe("no-store");
    const secret: string = created.body.secret;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(created.body).toMatchObject({
      organization_id: org.id,
      url,
      event_types: ["delegation.created", "delegation.revoked"],
      status: "active",
      disabled_reason: null,
      failing_since: null,
      previous_secret_expires_at: null,
    });

    const [stored] = await storedEndpoints(org.id);
    const ciphertext = Buffer.from(stored?.secret_ciphertext ?? []);
    expect(ciphertext.includes(Buffer.from(secret))).toBe(false);
    expect(ciphertext.includes(Buffer.from(secret.slice(6)))).toBe(false);
    const { ctx } = await testRuntime();
    expect(ctx.webhookSecrets?.open(ciphertext, created.body.id)).toBe(secret);
    // Bound to its row: the same ciphertext does not open as another endpoint's.
    expect(() => ctx.webhookSecrets?.open(ciphertext, crypto.randomUUID())).toThrow();

    const reader = await org.keyWith(["identity:read"]);
    const listed = await callIdentity("GET", path, { key: reader });
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ total: 1, limit: 50, offset: 0 });
    expect(listed.body.items[0]).toMatchObject({ id: created.body.id, url });
    const one = await callIdentity("GET", `${path}/${created.body.id}`, { key: reader });
    expect(one.status).toBe(200);
    for (const body of [listed.body, one.body]) {
      expect(JSON.stringify(body)).not.toContain(secret);
      expect(JSON.stringify(body)).not.toContain("secret_ciphertext");
    }
    expect(one.body).not.toHaveProperty("secret");

    const audit = await callIdentity("GET", `/api/v1/identity/audit?org_id=${org.id}`, {
      session: (await memberOf(org.id, "owner")).session,
    });
    expect(audit.body.items[0]).toMatchObject({
      action: "webhook.created",
      target: { type: "webhook", id: created.body.id },
      details: { url },
    });
  });

  test.each([
    ["http://hooks.example.com/x", "must use https://"],
    ["ftp://hooks.example.com/x", "must use https://"],
    ["https://10.0.0.1/x", "not an IP address"],
    ["https://169.254.169.254/latest/meta-data", "not an IP address"],
    ["https://[::1]/x", "not an IP address"],
    ["https://[fd00:ec2::254]/x", "not an IP address"],
    ["https://0x7f000001/x", "not an IP address"],
    ["https://2130706433/x", "not an IP address"],
    ["https://user:pw@hooks.example.com/x", "user name or password"],
    ["https://user@hooks.example.com/x", "user name or password"],
    ["https://localhost/x", "not localhost"],
    ["https://app.localhost/x", "not localhost"],
    ["https://intranet/x", "fully qualified"],
    ["https://printer.local/x", "public internet"],
    ["https://metadata.google.internal/x", "public internet"],
    ["https://hooks.example.com/x#frag", "fragment"],
    ["hooks.example.com/x", "absolute URL"],
    [`https://hooks.example.com/${"a".repeat(2048)}`, "at most 2048"],
    // Within 2048 as sent, past it once normalised: each `"` is stored as %22, each é as %C3%A9.
    [`https://hooks.example.com/${'"'.repeat(700)}`, "at most 2048 characters once normalised"],
    [`https://hooks.example.com/${"é".repeat(400)}`, "at most 2048 characters once normalised"],
    ["https://localhost../x", "not localhost"],
    ["https://printer.local../x", "public internet"],
    ["https://metadata.google.internal../x", "public internet"],
  ])("refuses %s with 400 invalid_webhook_url naming /url, storing nothing", async (url, reason) => {
    const { org, key } = await writerOf();
    const res = await callIdentity("POST", path, { key, body: { url, event_types: ["delegation.created"] } });
    expect(res.status).toBe(400);
    // A URL past the schema's length is refused by the schema, before the URL rules.
    if (url.length > 2048) {
      expect(res.body.code).toBe("validation_failed");
      expect(res.body.errors[0].path).toBe("/url");
    } else {
      expect(res.body.code).toBe("invalid_webhook_url");
      expect(res.body.errors).toEqual([{ path: "/url", message: expect.stringContaining(reason) }]);
    }
    expect(await storedEndpoints(org.id)).toEqual([]);
  });

  test("unknown event types: 400 unknown_event_type naming each and listing the allowed ones", async () => {
    const { org, key } = await writerOf();
    const res = await callIdentity("POST", path, {
      key,
      body: { url: hookUrl(), event_types: ["delegation.created", "delegation.exploded", "ping"] },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("unknown_event_type");
    expect(res.body.allowed_event_types).toEqual([...identityEventTypes]);
    expect(res.body.errors).toEqual([
      { path: "/event_types/1", message: 'unknown event type "delegation.exploded"' },
      { path: "/event_types/2", message: 'unknown event type "ping"' },
    ]);
    expect(await storedEndpoints(org.id)).toEqual([]);
  });

  test("a malformed body is 400 naming the field, nothing stored; repeated event types count once", async () => {
    const { org, key } = await writerOf();
    for (const [body, field] of [
      [{ event_types: ["delegation.created"] }, "/url"],
      [{ url: hookUrl() }, "/event_types"],
      [{ url: hookUrl(), event_types: [] }, "/event_types"],
      [{ url: hookUrl(), event_types: "delegation.created" }, "/event_types"],
      [{ url: 5, event_types: ["delegation.created"] }, "/url"],
    ] as const) {
      const res = await callIdentity("POST", path, { key, body });
      expect({ field, status: res.status, code: res.body.code }).toEqual({
        field,
        status: 400,
        code: "validation_failed",
      });
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
    }
    expect(await storedEndpoints(org.id)).toEqual([]);
    const twice = await callIdentity("POST", path, {
      key,
      body: { url: hookUrl(), event_types: ["invite.claimed", "invite.claimed"] },
    });
    expect(twice.body.event_types).toEqual(["invite.claimed"]);
  });

  test("localhost is accepted only when WEBHOOK_ALLOW_LOOPBACK is on", async () => {
    const { key } = await writerOf();
    const body = { url: "https://localhost:8443/hook", event_types: ["delegation.created"] };
    expect((await callIdentity("POST", path, { key, body })).status).toBe(400);
    const { app } = await buildIdentityApp({ WEBHOOK_ALLOW_LOOPBACK: true });
    const allowed = await callIdentity("POST", path, { key, body, app });
    expect(allowed.status).toBe(201);
    expect(allowed.body.url).toBe("https://localhost:8443/hook");
  });

  test("an organisation has at most 10 active endpoints: the 11th is 409, deleting one makes room", async () => {
    const { key } = await writerOf();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await callIdentity("POST", path, { key, body: { url: hookUrl(), event_types: ["invite.claimed"] } });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const eleventh = await callIdentity("POST", path, {
      key,
      body: { url: hookUrl(), event_types: ["invite.claimed"] },
    });
    expect(eleventh.status).toBe(409);
    expect(eleventh.body).toMatchObject({ code: "webhook_limit_reached", limit: 10 });
    expect((await callIdentity("DELETE", `${path}/${ids[0]}`, { key })).status).toBe(204);
    const again = await callIdentity("POST", path, { key, body: { url: hookUrl(), event_types: ["invite.claimed"] } });
    expect(again.status).toBe(201);
  });

  test("concurrent creates cannot pass the limit together", async () => {
    const { org, key } = await writerOf();
    const results = await Promise.all(
      Array.from({ length: 14 }, () =>
        callIdentity("POST", path, { key, body: { url: hookUrl(), event_types: ["invite.claimed"] } }),
      ),
    );
    expect(results.filter((r) => r.status === 201).length).toBe(10);
    expect(results.filter((r) => r.status === 409).length).toBe(4);
    expect((await storedEndpoints(org.id)).length).toBe(10);
  });

  test("owners and admins create with their session; a plain member reads but cannot create", async () => {
    const org = await createTestOrg();
    const admin = await memberOf(org.id, "admin");
    const member = await memberOf(org.id, "member");
    const created = await callIdentity("POST", `${path}?org_id=${org.id}`, {
      session: admin.session,
      body: { url: hookUrl(), event_types: ["delegation_request.created"] },
    });
    expect(created.status).toBe(201);
    const refused = await callIdentity("POST", `${path}?org_id=${org.id}`, {
      session: member.session,
      body: { url: hookUrl(), event_types: ["delegation_request.created"] },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("role_required");
    const listed = await callIdentity("GET", `${path}?org_id=${org.id}`, { session: member.session });
    expect(listed.body.items.map((i: { id: string }) => i.id)).toEqual([created.body.id]);
  });

  test("503 webhooks_unavailable where the service has no key for secrets; nothing stored", async () => {
    const { org, key } = await writerOf();
    const { ctx } = await buildIdentityApp();
    const app = createApp({ ...ctx, webhookSecrets: undefined });
    const res = await callApp(app, "POST", path, {
      key,
      body: { url: hookUrl(), event_types: ["delegation.created"] },
    });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe("webhooks_unavailable");
    expect(await storedEndpoints(org.id)).toEqual([]);
    // Nothing would ever send a ping or a redelivery either; reading still works.
    const created = await callIdentity("POST", path, {
      key,
      body: { url: hookUrl(), event_types: ["delegation.created"] },
    });
    for (const suffix of ["/ping", "/rotate-secret", `/deliveries/${crypto.randomUUID()}/redeliver`]) {
      const refused = await callApp(app, "POST", `${path}/${created.body.id}${suffix}`, { key });
      expect({ suffix, status: refused.status }).toEqual({ suffix, status: 503 });
    }
    expect((await callApp(app, "GET", `${path}/${created.body.id}`, { key })).status).toBe(200);
  });
});

describe("one endpoint", () => {
  async function endpointOf() {
    const { org, key } = await writerOf();
    const created = await callIdentity("POST", path, {
      key,
      body: { url: hookUrl(), event_types: ["delegation.created"] },
    });
    return { org, key, id: created.body.id as string, secret: created.body.secret as string };
  }

  test("DELETE answers 204, disables the endpoint and drops its pending deliveries; again is 204", async () => {
    const { org, key, id } = await endpointOf();
    const pinged = await callIdentity("POST", `${path}/${id}/ping`, { key });
    expect(pinged.status).toBe(202);
    expect(pinged.body.status).toBe("pending");

    const deleted = await callIdentity("DELETE", `${path}/${id}`, { key });
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBe("");
    expect((await callIdentity("GET", path, { key })).body.items).toEqual([]);
    const disabled = await callIdentity("GET", `${path}?status=disabled`, { key });
    expect(disabled.body.items.map((i: { id: string }) => i.id)).toEqual([id]);
    const one = await callIdentity("GET", `${path}/${id}`, { key });
    expect(one.body).toMatchObject({ status: "disabled", disabled_reason: "deleted" });
    expect(one.body.disabled_at).not.toBeNull();
    const deliveries = await callIdentity("GET", `${path}/${id}/deliveries`, { key });
    expect(deliveries.body.items.map((d: { status: string }) => d.status)).toEqual(["dropped"]);
    expect((await callIdentity("DELETE", `${path}/${id}`, { key })).status).toBe(204);
    // A deleted endpoint takes no pings, redeliveries or rotations, and cannot be enabled.
    for (const action of ["ping", "rotate-secret", "enable"]) {
      const res = await callIdentity("POST", `${path}/${id}/${action}`, { key });
      expect({ action, status: res.status, code: res.body.code }).toEqual({
        action,
        status: 409,
        code: "webhook_deleted",
      });
    }
    const redeliver = await callIdentity("POST", `${path}/${id}/deliveries/${pinged.body.id}/redeliver`, { key });
    expect(redeliver.body.code).toBe("webhook_deleted");
    const audit = await callIdentity("GET", `/api/v1/identity/audit?org_id=${org.id}`, {
      session: (await memberOf(org.id, "owner")).session,
    });
    expect(audit.body.items[0]).toMatchObject({ action: "webhook.deleted", details: { dropped_deliveries: 1 } });
  });

  test("another organisation's endpoint is 404 for every route", async () => {
    const { id } = await endpointOf();
    const { key } = await writerOf();
    const delivery = crypto.randomUUID();
    for (const [method, suffix] of [
      ["GET", ""],
      ["DELETE", ""],
      ["POST", "/ping"],
      ["POST", "/enable"],
      ["POST", "/rotate-secret"],
      ["GET", "/deliveries"],
      ["GET", `/deliveries/${delivery}`],
      ["POST", `/deliveries/${delivery}/redeliver`],
    ] as const) {
      const res = await callIdentity(method, `${path}/${id}${suffix}`, { key });
      expect({ method, suffix, status: res.status, code: res.body.code }).toEqual({
        method,
        suffix,
        status: 404,
        code: "webhook_not_found",
      });
    }
    const own = await endpointOf();
    const missing = await callIdentity("GET", `${path}/${own.id}/deliveries/${delivery}`, { key: own.key });
    expect(missing.body.code).toBe("delivery_not_found");
    expect((await callIdentity("GET", `${path}/not-a-uuid`, { key: own.key })).status).toBe(400);
  });

  test("rotate-secret answers a new secret; the previous one stays valid for the documented overlap", async () => {
    const { ctx } = await testRuntime();
    const { key, id, secret } = await endpointOf();
    const before = Date.now();
    const rotated = await callIdentity("POST", `${path}/${id}/rotate-secret`, { key });
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get("cache-control")).toBe("no-store");
    expect(rotated.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(rotated.body.secret).not.toBe(secret);
    const expires = Date.parse(rotated.body.previous_secret_expires_at);
    const overlap = ctx.config.WEBHOOK_SECRET_OVERLAP_HOURS * 3600_000;
    expect(expires).toBeGreaterThanOrEqual(before + overlap - 5000);
    expect(expires).toBeLessThanOrEqual(Date.now() + overlap + 5000);
    const [row] = await ctx.sql<{ secret_ciphertext: Uint8Array; previous_secret_ciphertext: Uint8Array }[]>`
      SELECT secret_ciphertext, previous_secret_ciphertext FROM webhook_endpoints WHERE id = ${id}::uuid`;
    expect(ctx.webhookSecrets?.open(row?.secret_ciphertext as Uint8Array, id)).toBe(rotated.body.secret);
    expect(ctx.webhookSecrets?.open(row?.previous_secret_ciphertext as Uint8Array, id)).toBe(secret);
    expect(JSON.stringify((await callIdentity("GET", `${path}/${id}`, { key })).body)).not.toContain(
      rotated.body.secret,
    );
  });

  test("enable brings back an endpoint disabled for failing, within the limit; an active one is unchanged", async () => {
    const { ctx } = await testRuntime();
    const { key, id } = await endpointOf();
    const active = await callIdentity("POST", `${path}/${id}/enable`, { key });
    expect(active.status).toBe(200);
    expect(active.body.status).toBe("active");
    await ctx.sql`
      UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'failing', disabled_at = now(),
        failing_since = now() - interval '6 days'
      WHERE id = ${id}::uuid`;
    const ping = await callIdentity("POST", `${path}/${id}/ping`, { key });
    expect(ping.status).toBe(409);
    expect(ping.body).toMatchObject({ code: "webhook_disabled", disabled_reason: "failing" });
    const enabled = await callIdentity("POST", `${path}/${id}/enable`, { key });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({
      status: "active",
      disabled_reason: null,
      disabled_at: null,
      failing_since: null,
    });
  });
});
