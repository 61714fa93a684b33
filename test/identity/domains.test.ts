import { describe, expect, test } from "bun:test";
import { publishFile, publishTxt } from "../support/domain-probe.ts";
import { createTestOrg, uniqueDomain } from "../support/fixtures.ts";
import { callIdentity, memberOf, signIn } from "../support/identity.ts";
import { testRuntime } from "../support/runtime.ts";

const path = "/api/v1/identity/domains";

async function ownerWithDomain() {
  const org = await createTestOrg({ domain: null });
  const owner = await memberOf(org.id, "owner");
  const domain = uniqueDomain();
  const res = await callIdentity("POST", path, { session: owner.session, body: { domain } });
  expect(res.status).toBe(201);
  return { org, owner, domain, record: res.body };
}

describe("registering domains", () => {
  test("normalises and answers the challenge instructions; repeating is idempotent", async () => {
    const org = await createTestOrg({ domain: null });
    const owner = await memberOf(org.id, "owner");
    const domain = uniqueDomain();
    const res = await callIdentity("POST", path, {
      session: owner.session,
      body: { domain: ` ${domain.toUpperCase()}. ` },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      organization_id: org.id,
      domain,
      state: "registered",
      verification_method: null,
      verified_at: null,
    });
    expect(res.body.verification.dns_txt.name).toBe(`_content-telemetry.${domain}`);
    expect(res.body.verification.dns_txt.value).toMatch(/^content-telemetry-verification=[0-9a-f]{64}$/);
    expect(res.body.verification.https_file.url).toBe(
      `https://${domain}/.well-known/content-telemetry-verification.txt`,
    );
    const again = await callIdentity("POST", path, { session: owner.session, body: { domain } });
    expect(again.body.id).toBe(res.body.id);
    const idn = await callIdentity("POST", path, {
      session: owner.session,
      body: { domain: "Bücher-Shop-Test.example" },
    });
    expect(idn.body.domain).toBe("xn--bcher-shop-test-zvb.example");
    const listed = await callIdentity("GET", path, { session: owner.session });
    expect(listed.body.total).toBe(2);
    const one = await callIdentity("GET", `${path}/${domain.toUpperCase()}`, { session: owner.session });
    expect(one.body.id).toBe(res.body.id);
    expect((await callIdentity("GET", `${path}/${uniqueDomain()}`, { session: owner.session })).status).toBe(404);
  });

  test("refuses IPs, localhost, public suffixes and non-hosts", async () => {
    const org = await createTestOrg({ domain: null });
    const writer = await org.keyWith(["identity:read", "identity:write"]);
    for (const domain of [
      "10.0.0.1",
      "[::1]",
      "::1",
      "localhost",
      "api.localhost",
      "co.uk",
      "github.io",
      "com",
      "a..b.example",
      "-a.example",
      "",
      `${"x".repeat(64)}.example`,
      "a.example/path",
      "user@a.example",
    ]) {
      const res = await callIdentity("POST", path, { key: writer, body: { domain } });
      expect(res.status).toBe(400);
    }
    for (const body of [{}, { domain: 5 }, { name: "a.example" }]) {
      expect((await callIdentity("POST", path, { key: writer, body })).status).toBe(400);
    }
    expect((await callIdentity("GET", path, { key: writer })).body.total).toBe(0);
  });

  test("credentials: owner/admin sessions and identity:write keys of a content owner", async () => {
    const org = await createTestOrg({ domain: null });
    const admin = await memberOf(org.id, "admin");
    const member = await memberOf(org.id, "member");
    expect(
      (await callIdentity("POST", path, { session: admin.session, body: { domain: uniqueDomain() } })).status,
    ).toBe(201);
    expect(
      (await callIdentity("POST", path, { session: member.session, body: { domain: uniqueDomain() } })).status,
    ).toBe(403);
    expect((await callIdentity("POST", path, { key: org.key, body: { domain: uniqueDomain() } })).status).toBe(403);
    expect((await callIdentity("POST", path, { body: { domain: uniqueDomain() } })).status).toBe(401);
    expect((await callIdentity("GET", path, { session: member.session })).status).toBe(200);
    const stranger = await signIn();
    expect((await callIdentity("GET", `${path}?org_id=${org.id}`, { session: stranger.session })).status).toBe(403);
    const platform = await createTestOrg({ type: "platform" });
    const platformWriter = await platform.keyWith(["identity:write"]);
    const res = await callIdentity("POST", path, { key: platformWriter, body: { domain: uniqueDomain() } });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("content_owner_only");
  });
});

describe("verifying domains", () => {
  test("by DNS TXT record; the org's cached keys then see the domain", async () => {
    const { org, owner, domain, record } = await ownerWithDomain();
    const { ctx } = await testRuntime();
    expect((await ctx.keys.authenticate(org.key)).verifiedDomains).toEqual([]);
    const verify = () =>
      callIdentity("POST", `${path}/${domain}/verify`, { session: owner.session, body: { method: "dns_txt" } });
    const missing = await verify();
    expect(missing.status).toBe(422);
    expect(missing.body.code).toBe("verification_failed");
    publishTxt(record.verification.dns_txt.name, ["v=spf1 -all", "content-telemetry-verification=wrong"]);
    expect((await verify()).status).toBe(422);
    publishTxt(record.verification.dns_txt.name, ["v=spf1 -all", record.verification.dns_txt.value]);
    const ok = await verify();
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ state: "verified", verification_method: "dns_txt", verification: null });
    expect((await ctx.keys.authenticate(org.key)).verifiedDomains).toEqual([domain]);
    expect((await verify()).status).toBe(200);
    const audit = await callIdentity("GET", "/api/v1/identity/audit", { session: owner.session });
    expect(audit.body.items[0]).toMatchObject({ action: "domain.verified", target: { type: "domain", id: domain } });
  });

  test("by HTTPS file: statuses other than 200, redirects, wrong or oversized bodies fail", async () => {
    const { org, domain, record } = await ownerWithDomain();
    const writer = await org.keyWith(["identity:write"]);
    const verify = () =>
      callIdentity("POST", `${path}/${domain}/verify`, { key: writer, body: { method: "https_file" } });
    const wellKnown = "/.well-known/content-telemetry-verification.txt";
    const challenge = record.verification.https_file.body;
    expect((await verify()).status).toBe(422);
    publishFile(domain, wellKnown, { status: 302, headers: { location: `https://elsewhere.example${wellKnown}` } });
    const redirected = await verify();
    expect(redirected.status).toBe(422);
    expect(redirected.body.detail).toContain("302");
    publishFile(domain, wellKnown, { status: 500, body: challenge });
    expect((await verify()).status).toBe(422);
    publishFile(domain, wellKnown, { body: "something else" });
    expect((await verify()).status).toBe(422);
    publishFile(domain, wellKnown, { body: `${challenge}${" ".repeat(5000)}` });
    expect((await verify()).status).toBe(422);
    publishFile(domain, wellKnown, { body: `${challenge}\n` });
    const ok = await verify();
    expect(ok.status).toBe(200);
    expect(ok.body.verification_method).toBe("https_file");
  });

  test("only one organisation holds a domain verified: a second claim is 409", async () => {
    const first = await ownerWithDomain();
    publishTxt(first.record.verification.dns_txt.name, [first.record.verification.dns_txt.value]);
    expect(
      (
        await callIdentity("POST", `${path}/${first.domain}/verify`, {
          session: first.owner.session,
          body: { method: "dns_txt" },
        })
      ).status,
    ).toBe(200);

    const org = await createTestOrg({ domain: null });
    const owner = await memberOf(org.id, "owner");
    const second = await callIdentity("POST", path, { session: owner.session, body: { domain: first.domain } });
    expect(second.status).toBe(201);
    expect(second.body.verification.dns_txt.value).not.toBe(first.record.verification.dns_txt.value);
    publishTxt(second.body.verification.dns_txt.name, [second.body.verification.dns_txt.value]);
    const res = await callIdentity("POST", `${path}/${first.domain}/verify`, {
      session: owner.session,
      body: { method: "dns_txt" },
    });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("domain_taken");
    // The first owner's own record is not reachable with the second's challenge either.
    expect((await callIdentity("GET", `${path}/${first.domain}`, { session: owner.session })).body.state).toBe(
      "registered",
    );
  });

  test("credentials, unknown domains and bad bodies", async () => {
    const { org, domain } = await ownerWithDomain();
    const member = await memberOf(org.id, "member");
    const url = `${path}/${domain}/verify`;
    expect((await callIdentity("POST", url, { session: member.session, body: { method: "dns_txt" } })).status).toBe(
      403,
    );
    expect((await callIdentity("POST", url, { key: org.key, body: { method: "dns_txt" } })).status).toBe(403);
    expect((await callIdentity("POST", url, { body: { method: "dns_txt" } })).status).toBe(401);
    const other = await createTestOrg();
    const otherWriter = await other.keyWith(["identity:write"]);
    expect((await callIdentity("POST", url, { key: otherWriter, body: { method: "dns_txt" } })).status).toBe(404);
    expect(
      (await callIdentity("POST", `${url}?org_id=${org.id}`, { key: otherWriter, body: { method: "dns_txt" } })).status,
    ).toBe(403);
    const writer = await org.keyWith(["identity:write"]);
    for (const body of [{}, { method: "email" }, { method: 1 }]) {
      expect((await callIdentity("POST", url, { key: writer, body })).status).toBe(400);
    }
    expect(
      (await callIdentity("POST", `${path}/localhost/verify`, { key: writer, body: { method: "dns_txt" } })).status,
    ).toBe(400);
  });
});

describe("removing domains", () => {
  test("drops the domain from the organisation and its keys", async () => {
    const org = await createTestOrg();
    const { ctx } = await testRuntime();
    expect((await ctx.keys.authenticate(org.key)).verifiedDomains).toEqual([org.domain as string]);
    const writer = await org.keyWith(["identity:write"]);
    const res = await callIdentity("DELETE", `${path}/${org.domain}`, { key: writer });
    expect(res.status).toBe(204);
    expect((await ctx.keys.authenticate(org.key)).verifiedDomains).toEqual([]);
    expect((await callIdentity("DELETE", `${path}/${org.domain}`, { key: writer })).status).toBe(404);
    expect((await callIdentity("DELETE", `${path}/${org.domain}`, { key: org.key })).status).toBe(403);
  });
});
