import { describe, expect, test } from "bun:test";
import { outboxOf } from "../support/delegations.ts";
import { createTestOrg, uniqueDomain } from "../support/fixtures.ts";
import { callIdentity, memberOf, signIn, signInOperatorAdmin, uniqueEmail } from "../support/identity.ts";
import { testRuntime } from "../support/runtime.ts";

const base = "/api/v1/identity";
const partnerScopes = ["partner:provision", "identity:write", "identity:read"];

async function enabledPartner() {
  const org = await createTestOrg({ type: "platform" });
  const admin = await signInOperatorAdmin();
  const enabled = await callIdentity("PUT", `${base}/admin/trusted-partners/${org.id}`, { session: admin.session });
  expect(enabled.status).toBe(200);
  return { org, key: await org.keyWith(partnerScopes) };
}

const provisionBody = (domains = [uniqueDomain()]) => ({
  name: "Provisioned News",
  domains,
  owner_email: uniqueEmail("owner"),
});

describe("operator admin: trusted partners", () => {
  test("enable a platform organisation, list it, disable it", async () => {
    const org = await createTestOrg({ type: "platform", name: "Partner Co" });
    const admin = await signInOperatorAdmin();
    const res = await callIdentity("PUT", `${base}/admin/trusted-partners/${org.id}`, { session: admin.session });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ org_id: org.id, name: "Partner Co", enabled_by: admin.email });
    expect(
      (await callIdentity("PUT", `${base}/admin/trusted-partners/${org.id}`, { session: admin.session })).body
        .enabled_at,
    ).toBe(res.body.enabled_at);
    // Enabling again changes nothing, so the audit log holds the first enabling only.
    const { ctx } = await testRuntime();
    const [audited] = await ctx.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM audit_events WHERE org_id = ${org.id} AND action = 'trusted_partner.enabled'`;
    expect(audited?.n).toBe(1);
    const listed = await callIdentity("GET", `${base}/admin/trusted-partners?limit=100`, { session: admin.session });
    expect(listed.body.items.some((p: { org_id: string }) => p.org_id === org.id)).toBe(true);
    expect(
      (await callIdentity("DELETE", `${base}/admin/trusted-partners/${org.id}`, { session: admin.session })).status,
    ).toBe(204);
    expect(
      (await callIdentity("DELETE", `${base}/admin/trusted-partners/${org.id}`, { session: admin.session })).status,
    ).toBe(404);
  });

  test("only platforms; only operator admins", async () => {
    const admin = await signInOperatorAdmin();
    const owner = await createTestOrg();
    const refused = await callIdentity("PUT", `${base}/admin/trusted-partners/${owner.id}`, { session: admin.session });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe("not_a_platform");
    expect(refused.body.errors).toEqual([{ path: "/org_id", message: "is a content-owner organisation" }]);
    expect(
      (await callIdentity("PUT", `${base}/admin/trusted-partners/${crypto.randomUUID()}`, { session: admin.session }))
        .status,
    ).toBe(404);
    expect((await callIdentity("PUT", `${base}/admin/trusted-partners/nope`, { session: admin.session })).status).toBe(
      400,
    );
    const platform = await createTestOrg({ type: "platform" });
    const user = await memberOf(platform.id, "owner");
    expect(
      (await callIdentity("PUT", `${base}/admin/trusted-partners/${platform.id}`, { session: user.session })).status,
    ).toBe(403);
    const key = await platform.keyWith(partnerScopes);
    expect((await callIdentity("PUT", `${base}/admin/trusted-partners/${platform.id}`, { key })).status).toBe(403);
    expect((await callIdentity("PUT", `${base}/admin/trusted-partners/${platform.id}`)).status).toBe(401);
    expect((await callIdentity("GET", `${base}/admin/trusted-partners`, { session: user.session })).status).toBe(403);
  });
});

describe("partner provisioning", () => {
  test("creates a content owner with verified domains and an owner invite; the claim is reported to the partner", async () => {
    const partner = await enabledPartner();
    const body = provisionBody([uniqueDomain(), uniqueDomain()]);
    const res = await callIdentity("POST", `${base}/partner/organizations`, { key: partner.key, body });
    expect(res.status).toBe(201);
    expect(res.body.organization).toMatchObject({
      name: "Provisioned News",
      org_type: "content_owner",
      provisioned_by: partner.org.id,
    });
    expect(
      res.body.domains.map((d: { state: string; verification_method: string }) => [d.state, d.verification_method]),
    ).toEqual([
      ["verified", "partner_attestation"],
      ["verified", "partner_attestation"],
    ]);
    expect(res.body.invite).toMatchObject({
      email: body.owner_email,
      role: "owner",
      provisioning_org_id: partner.org.id,
    });
    const resolved = await callIdentity("GET", `/resolve?domain=${body.domains[0]}`);
    expect(resolved.body.organization.id).toBe(res.body.organization.id);

    const owner = await signIn(body.owner_email);
    const claimed = await callIdentity("POST", `${base}/invites/${res.body.invite.id}/claim`, {
      session: owner.session,
    });
    expect(claimed.body.role).toBe("owner");
    const claimedEvents = (await outboxOf(partner.org.id)).filter((event) => event.event_type === "invite.claimed");
    expect(claimedEvents.map((event) => (event.data.invite as { id: string }).id)).toEqual([res.body.invite.id]);
    expect((await outboxOf(res.body.organization.id)).map((event) => event.event_type)).not.toContain("invite.claimed");
    const listed = await callIdentity("GET", `${base}/partner/organizations`, { key: partner.key });
    expect(listed.body.items.map((o: { id: string }) => o.id)).toEqual([res.body.organization.id]);
  });

  test("a domain verified by someone else is 409 and nothing is created", async () => {
    const partner = await enabledPartner();
    const holder = await createTestOrg();
    const res = await callIdentity("POST", `${base}/partner/organizations`, {
      key: partner.key,
      body: provisionBody([uniqueDomain(), holder.domain as string]),
    });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("domain_taken");
    expect((await callIdentity("GET", `${base}/partner/organizations`, { key: partner.key })).body.total).toBe(0);
  });

  test("a parent of a domain someone else verified is 409: it would cover theirs; one only registered is no bar", async () => {
    const partner = await enabledPartner();
    const parent = uniqueDomain();
    const holder = await createTestOrg({ domain: `news.${parent}` });
    const refused = await callIdentity("POST", `${base}/partner/organizations`, {
      key: partner.key,
      body: provisionBody([parent]),
    });
    expect([refused.status, refused.body.code]).toEqual([409, "domain_taken"]);
    expect(refused.body.detail).toBe(
      `news.${parent} is verified by another organisation, and ${parent} would cover it`,
    );
    expect((await callIdentity("GET", `${base}/partner/organizations`, { key: partner.key })).body.total).toBe(0);
    expect((await callIdentity("GET", `/resolve?domain=news.${parent}`)).body.organization.id).toBe(holder.id);

    const otherParent = uniqueDomain();
    await createTestOrg({ domain: `news.${otherParent}`, verified: false });
    const provisioned = await callIdentity("POST", `${base}/partner/organizations`, {
      key: partner.key,
      body: provisionBody([otherParent]),
    });
    expect(provisioned.status).toBe(201);
  });

  test("a subdomain of a domain someone else verified is 409: it would take over its resolution", async () => {
    const partner = await enabledPartner();
    const holder = await createTestOrg();
    const refused = await callIdentity("POST", `${base}/partner/organizations`, {
      key: partner.key,
      body: provisionBody([`news.${holder.domain}`]),
    });
    expect([refused.status, refused.body.code, refused.body.detail]).toEqual([
      409,
      "domain_taken",
      `news.${holder.domain} lies under ${holder.domain}, which another organisation has verified`,
    ]);
    expect((await callIdentity("GET", `/resolve?domain=news.${holder.domain}`)).body.organization.id).toBe(holder.id);
  });

  test("needs an enabled platform partner key with partner:provision and identity:write", async () => {
    const partner = await enabledPartner();
    const body = provisionBody();
    const post = (key?: string) => callIdentity("POST", `${base}/partner/organizations`, { key, body });
    expect((await post()).status).toBe(401);
    const noWrite = await post(await partner.org.keyWith(["partner:provision"]));
    expect(noWrite.status).toBe(403);
    expect(noWrite.body.required_scope).toBe("identity:write");
    expect((await post(await partner.org.keyWith(["identity:write"]))).status).toBe(403);
    const notEnabled = await createTestOrg({ type: "platform" });
    const refused = await post(await notEnabled.keyWith(partnerScopes));
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("partner_not_enabled");
    const contentOwner = await createTestOrg();
    expect((await post(await contentOwner.keyWith(partnerScopes))).status).toBe(403);
    const user = await memberOf(partner.org.id, "owner");
    expect((await callIdentity("POST", `${base}/partner/organizations`, { session: user.session, body })).status).toBe(
      401,
    );
    // Disabling takes effect at once for keys already in use.
    const admin = await signInOperatorAdmin();
    await callIdentity("DELETE", `${base}/admin/trusted-partners/${partner.org.id}`, { session: admin.session });
    expect((await post(partner.key)).status).toBe(403);
  });

  test("bad bodies are 400", async () => {
    const partner = await enabledPartner();
    const good = provisionBody();
    for (const body of [
      {},
      { ...good, domains: [] },
      { ...good, domains: ["127.0.0.1"] },
      { ...good, domains: ["co.uk"] },
      { ...good, owner_email: "nope" },
      { ...good, name: "" },
      { ...good, domains: Array.from({ length: 21 }, () => uniqueDomain()) },
    ]) {
      expect((await callIdentity("POST", `${base}/partner/organizations`, { key: partner.key, body })).status).toBe(
        400,
      );
    }
    expect((await callIdentity("GET", `${base}/partner/organizations`, { key: partner.key })).body.total).toBe(0);
  });
});

describe("partner attestation upgrade", () => {
  test("verifies a registered domain of an owner the partner provisioned, nobody else's", async () => {
    const partner = await enabledPartner();
    const provisioned = await callIdentity("POST", `${base}/partner/organizations`, {
      key: partner.key,
      body: provisionBody(),
    });
    const orgId = provisioned.body.organization.id;
    const { ctx } = await testRuntime();
    const extra = uniqueDomain();
    await ctx.sql`INSERT INTO domains (org_id, domain) VALUES (${orgId}, ${extra})`;
    const attest = (key: string, org: string, domain: string) =>
      callIdentity("POST", `${base}/partner/organizations/${org}/domains/${domain}/attest`, { key });

    const other = await enabledPartner();
    const foreign = await attest(other.key, orgId, extra);
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe("not_provisioned_by_you");

    const ok = await attest(partner.key, orgId, extra.toUpperCase());
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ domain: extra, state: "verified", verification_method: "partner_attestation" });
    expect((await attest(partner.key, orgId, extra)).status).toBe(200);
    expect((await attest(partner.key, orgId, uniqueDomain())).status).toBe(404);
    // No organisation answers as another's does: no oracle for organisation ids.
    const unknown = await attest(partner.key, crypto.randomUUID(), extra);
    expect([unknown.status, unknown.body.code]).toEqual([403, "not_provisioned_by_you"]);
    expect((await attest(partner.key, orgId, "localhost")).status).toBe(400);

    // An owner the partner did not provision.
    const selfServe = await createTestOrg({ verified: false });
    expect((await attest(partner.key, selfServe.id, selfServe.domain as string)).status).toBe(403);
    // A domain someone else verified.
    const holder = await createTestOrg();
    await ctx.sql`INSERT INTO domains (org_id, domain) VALUES (${orgId}, ${holder.domain})`;
    expect((await attest(partner.key, orgId, holder.domain as string)).status).toBe(409);
    // The parent of a domain someone else verified.
    const parent = uniqueDomain();
    await createTestOrg({ domain: `shop.${parent}` });
    await ctx.sql`INSERT INTO domains (org_id, domain) VALUES (${orgId}, ${parent})`;
    const covering = await attest(partner.key, orgId, parent);
    expect([covering.status, covering.body.code]).toEqual([409, "domain_taken"]);
    // What the owner holds already, or never registered, is answered as before,
    // whatever others hold around it.
    await ctx.sql`INSERT INTO domains (org_id, domain) VALUES (${orgId}, ${`news.${extra}`})`;
    await createTestOrg({ domain: `deep.news.${extra}` });
    const held = await attest(partner.key, orgId, extra);
    expect([held.status, held.body.state]).toEqual([200, "verified"]);
    const unregistered = await attest(partner.key, orgId, `shop.${parent}`);
    expect([unregistered.status, unregistered.body.code]).toEqual([404, "domain_not_found"]);
    expect((await attest(await partner.org.keyWith(["partner:provision"]), orgId, extra)).status).toBe(403);
  });
});
