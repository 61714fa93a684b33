import { describe, expect, test } from "bun:test";
import { lockDomainFamilies, verifyDomain } from "../../src/modules/domains/service.ts";
import { addMember } from "../../src/modules/organizations/service.ts";
import { cli } from "../support/cli.ts";
import { testServerUrl } from "../support/databases.ts";
import { createTestOrg, uniqueDomain } from "../support/fixtures.ts";
import { callIdentity, memberOf, signIn, signInOperatorAdmin, uniqueEmail } from "../support/identity.ts";
import { untilWaitingOnLocks } from "../support/polling.ts";
import { testRuntime } from "../support/runtime.ts";

// Changes that meet at the same moment. The embedded engine runs one statement at
// a time, so these races show on a server (TEST_DATABASE_URL); on both engines
// every answer must be one that some order of the requests would give.
const base = "/api/v1/identity";
const rounds = 8;

async function auditActions(orgId: string, action: string): Promise<number> {
  const { ctx } = await testRuntime();
  const [row] = await ctx.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM audit_events WHERE org_id = ${orgId}::uuid AND action = ${action}`;
  return row?.n ?? 0;
}

describe("concurrent changes", () => {
  test("member changes take turns: the last owner stays, and an admin never removes someone just made owner", async () => {
    const { ctx } = await testRuntime();
    const [owner, promoted, admin] = await Promise.all([signIn(), signIn(), signIn()]);
    for (let round = 0; round < rounds; round++) {
      const org = await createTestOrg();
      await addMember(ctx.sql, org.id, owner.userId, "owner");
      await addMember(ctx.sql, org.id, promoted.userId, "admin");
      await addMember(ctx.sql, org.id, admin.userId, "admin");
      const member = (who: string, target: string, method: "PATCH" | "DELETE") =>
        callIdentity(method, `${base}/members/${target}?org_id=${org.id}`, {
          session: who,
          ...(method === "PATCH" ? { body: { role: "owner" } } : {}),
        });
      const [promotion, removal, leaving] = await Promise.all([
        member(owner.session, promoted.userId, "PATCH"),
        member(admin.session, promoted.userId, "DELETE"),
        member(owner.session, owner.userId, "DELETE"),
      ]);
      // In any order one of the two fails: removed first, the promotion finds nobody
      // (404); promoted first, an admin may not remove an owner (403).
      expect([
        [200, 403],
        [404, 204],
      ]).toContainEqual([promotion.status, removal.status]);
      if (leaving.status !== 204) expect(leaving.body.code).toBe("last_owner");
      const owners = await ctx.sql`
        SELECT 1 FROM organization_members WHERE org_id = ${org.id}::uuid AND role = 'owner'`;
      expect(owners.length).toBeGreaterThanOrEqual(1);
      // Only changes that were made are recorded.
      expect(await auditActions(org.id, "member.role_changed")).toBe(promotion.status === 200 ? 1 : 0);
    }
  }, 60_000);

  test("invitations to one address at once: one is made, the others are 409 invite_exists", async () => {
    const org = await createTestOrg();
    const { session } = await memberOf(org.id, "owner");
    for (let round = 0; round < rounds; round++) {
      const email = uniqueEmail("invited");
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => callIdentity("POST", `${base}/invites`, { session, body: { email } })),
      );
      expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409, 409, 409, 409]);
      expect(answers.filter((answer) => answer.status === 409).map((answer) => answer.body.code)).toEqual(
        Array(4).fill("invite_exists"),
      );
      const { ctx } = await testRuntime();
      const made = await ctx.sql<{ revoked: boolean }[]>`
        SELECT revoked_at IS NOT NULL AS revoked FROM invites WHERE org_id = ${org.id}::uuid AND email = ${email}`;
      expect([...made]).toEqual([{ revoked: false }]);
    }
  }, 60_000);

  test("two provisionings of the same domains in opposite orders: one wins, the other is 409 domain_taken", async () => {
    const partner = await createTestOrg({ type: "platform" });
    const operator = await signInOperatorAdmin();
    await callIdentity("PUT", `${base}/admin/trusted-partners/${partner.id}`, { session: operator.session });
    const key = await partner.keyWith(["partner:provision", "identity:write", "identity:read"]);
    for (let round = 0; round < rounds; round++) {
      const domains = [uniqueDomain(), uniqueDomain()];
      const provision = (order: string[]) =>
        callIdentity("POST", `${base}/partner/organizations`, {
          key,
          body: { name: "Raced News", domains: order, owner_email: uniqueEmail("owner") },
        });
      const answers = await Promise.all([provision(domains), provision(domains.toReversed())]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
      const won = answers.find((answer) => answer.status === 201);
      expect(answers.find((answer) => answer.status === 409)?.body.code).toBe("domain_taken");
      // The answer lists the domains in the order the caller sent them.
      const sent = won === answers[0] ? domains : domains.toReversed();
      expect(won?.body.domains.map((domain: { domain: string }) => domain.domain)).toEqual(sent);
    }
  }, 60_000);

  test("attestations meeting in one family: one domain on two owners, or a parent and its subdomain; one wins, the other is 409", async () => {
    const { ctx } = await testRuntime();
    const partner = await createTestOrg({ type: "platform" });
    const operator = await signInOperatorAdmin();
    await callIdentity("PUT", `${base}/admin/trusted-partners/${partner.id}`, { session: operator.session });
    const key = await partner.keyWith(["partner:provision", "identity:write", "identity:read"]);
    const provisioned = async () =>
      (
        await callIdentity("POST", `${base}/partner/organizations`, {
          key,
          body: { name: "Attested News", domains: [uniqueDomain()], owner_email: uniqueEmail("owner") },
        })
      ).body.organization.id as string;
    const [first, second] = [await provisioned(), await provisioned()];
    const registered = async (orgId: string, domain: string) => {
      await ctx.sql`INSERT INTO domains (org_id, domain) VALUES (${orgId}, ${domain})`;
      return { orgId, domain };
    };
    const attestedAtOnce = async (claims: { orgId: string; domain: string }[]) => {
      const answers = await Promise.all(
        claims.map(({ orgId, domain }) =>
          callIdentity("POST", `${base}/partner/organizations/${orgId}/domains/${domain}/attest`, { key }),
        ),
      );
      return answers.map((answer) => [answer.status, answer.body.code]).sort();
    };
    const oneWins = [
      [200, undefined],
      [409, "domain_taken"],
    ];
    for (let round = 0; round < rounds; round++) {
      const same = uniqueDomain();
      expect(await attestedAtOnce([await registered(first, same), await registered(second, same)])).toEqual(oneWins);
      // Only the family lock keeps both checks from passing before either commits.
      const parent = uniqueDomain();
      expect(
        await attestedAtOnce([await registered(first, parent), await registered(second, `news.${parent}`)]),
      ).toEqual(oneWins);
    }
  }, 60_000);

  test("a domain registered, verified or a key revoked several times at once is recorded once", async () => {
    const { ctx } = await testRuntime();
    const org = await createTestOrg({ verified: false });
    const key = await org.keyWith(["identity:write", "identity:read"]);
    const domain = uniqueDomain();
    const registered = await Promise.all(
      Array.from({ length: 5 }, () => callIdentity("POST", `${base}/domains`, { key, body: { domain } })),
    );
    expect(registered.map((answer) => answer.status)).toEqual(Array(5).fill(201));
    expect(await auditActions(org.id, "domain.registered")).toBe(1);

    const partner = await createTestOrg({ type: "platform" });
    const operator = await signInOperatorAdmin();
    await callIdentity("PUT", `${base}/admin/trusted-partners/${partner.id}`, { session: operator.session });
    const partnerKey = await partner.keyWith(["partner:provision", "identity:write", "identity:read"]);
    const provisioned = await callIdentity("POST", `${base}/partner/organizations`, {
      key: partnerKey,
      body: { name: "Attested News", domains: [uniqueDomain()], owner_email: uniqueEmail("owner") },
    });
    const ownerId = provisioned.body.organization.id;
    const extra = uniqueDomain();
    await ctx.sql`INSERT INTO domains (org_id, domain) VALUES (${ownerId}::uuid, ${extra})`;
    const attested = await Promise.all(
      Array.from({ length: 5 }, () =>
        callIdentity("POST", `${base}/partner/organizations/${ownerId}/domains/${extra}/attest`, { key: partnerKey }),
      ),
    );
    expect(attested.map((answer) => [answer.status, answer.body.state])).toEqual(Array(5).fill([200, "verified"]));
    expect(await auditActions(ownerId, "domain.attested")).toBe(1);

    const spare = await callIdentity("POST", `${base}/keys`, {
      key,
      body: { name: "spare", scopes: ["identity:read"] },
    });
    const revoked = await Promise.all(
      Array.from({ length: 5 }, () => callIdentity("DELETE", `${base}/keys/${spare.body.id}`, { key })),
    );
    expect(new Set(revoked.map((answer) => answer.status)).size).toBe(1);
    expect(await auditActions(org.id, "api_key.revoked")).toBe(1);
  }, 60_000);
});

// The embedded engine is one session: a transaction held open would stop the request too.
test.skipIf(!testServerUrl)(
  "an admin demoted while inviting an admin is refused once the demotion commits, not admitted on the old role",
  async () => {
    const { ctx } = await testRuntime();
    const org = await createTestOrg();
    const admin = await memberOf(org.id, "admin");
    const demotion = await ctx.sql.reserve();
    try {
      await demotion`BEGIN`;
      await demotion`
        UPDATE organization_members SET role = 'member' WHERE org_id = ${org.id}::uuid AND user_id = ${admin.userId}::uuid`;
      const inviting = callIdentity("POST", `${base}/invites`, {
        session: admin.session,
        body: { email: uniqueEmail("invited"), role: "admin" },
      });
      await untilWaitingOnLocks(ctx.sql);
      await demotion`COMMIT`;
      const invited = await inviting;
      expect([invited.status, invited.body.code]).toEqual([403, "role_required"]);
    } finally {
      demotion.release();
    }
  },
  30_000,
);

test.skipIf(!testServerUrl)(
  "an admin revoking an invitation to their own address while claiming it gets one order's answers, not a deadlock",
  async () => {
    const { ctx } = await testRuntime();
    const org = await createTestOrg();
    const admin = await memberOf(org.id, "admin");
    const invited = await callIdentity("POST", `${base}/invites`, {
      session: admin.session,
      body: { email: admin.email, role: "admin" },
    });
    expect(invited.status).toBe(201);
    // Holding the organisation's membership turn stops the claim after it has locked the invitation.
    const turn = await ctx.sql.reserve();
    try {
      await turn`BEGIN`;
      await turn`SELECT pg_advisory_xact_lock(hashtextextended(${`members:${org.id}`}, 0))`;
      const claiming = callIdentity("POST", `${base}/invites/${invited.body.id}/claim`, { session: admin.session });
      await untilWaitingOnLocks(ctx.sql);
      const revoking = callIdentity("DELETE", `${base}/invites/${invited.body.id}?org_id=${org.id}`, {
        session: admin.session,
      });
      await untilWaitingOnLocks(ctx.sql, 2);
      await turn`COMMIT`;
      const [claimed, revoked] = await Promise.all([claiming, revoking]);
      expect([claimed.status, revoked.status, revoked.body.code]).toEqual([200, 404, "invite_not_found"]);
    } finally {
      turn.release();
    }
  },
  30_000,
);

test.skipIf(!testServerUrl)(
  "the CLI's domain add --verified waits for a verification in flight on the same domain, and neither deadlocks",
  async () => {
    const { ctx } = await testRuntime();
    const org = await createTestOrg({ verified: false });
    const domain = org.domain as string;
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // A verification in flight: its family taken, its UPDATE still to come.
    const verification = ctx.sql.begin(async (tx) => {
      await lockDomainFamilies(tx, [domain]);
      await released;
      return verifyDomain(tx, org.id, domain, "operator");
    });
    const added = cli("domain", "add", "--org", org.id, "--domain", domain, "--verified", "--json");
    // Until the CLI waits for the family (the start-up's own locks may come first).
    await untilWaitingOnLocks(ctx.sql);
    release();
    const [verified, answer] = await Promise.all([verification, added]);
    expect(verified?.state).toBe("verified");
    expect([answer.exitCode, answer.stderr]).toEqual([0, ""]);
    expect(JSON.parse(answer.stdout).state).toBe("verified");
  },
  30_000,
);
