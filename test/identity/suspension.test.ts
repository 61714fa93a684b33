import { describe, expect, test } from "bun:test";
import { cli } from "../support/cli.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { callIdentity, memberOf, signIn, signInOperatorAdmin } from "../support/identity.ts";
import { msUntil } from "../support/polling.ts";
import { testRuntime } from "../support/runtime.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";
import { storedEvents } from "../support/telemetry-store.ts";

const keys = "/api/v1/identity/keys";

async function auditOf(orgId: string): Promise<string[]> {
  const { ctx } = await testRuntime();
  const rows = await ctx.sql<{ action: string }[]>`
    SELECT action FROM audit_events WHERE org_id = ${orgId}::uuid AND action LIKE 'organization.%'
    ORDER BY occurred_at, action`;
  return rows.map((row) => row.action);
}

describe("suspending an organisation (CLI org suspend / org resume)", () => {
  test("its keys and members' sessions are refused within a second, in this process too; resuming restores them", async () => {
    const org = await createTestOrg();
    const owner = await memberOf(org.id, "owner");
    const bystander = await createTestOrg();
    const byKey = async () => (await callIdentity("GET", keys, { key: org.key })).status;
    const bySession = async () => (await callIdentity("GET", keys, { session: owner.session })).status;
    // Both in memory before the change: only the notification can drop the cached key.
    expect([await byKey(), await bySession()]).toEqual([200, 200]);

    const suspended = await cli("org", "suspend", "--id", org.id, "--json");
    expect(suspended.exitCode).toBe(0);
    expect(JSON.parse(suspended.stdout)).toMatchObject({ id: org.id, suspended_at: expect.any(String) });
    expect(await msUntil(async () => (await byKey()) === 403)).toBeLessThan(1000);
    const refused = await callIdentity("GET", keys, { key: org.key });
    expect(refused.body.code).toBe("organization_suspended");
    const session = await callIdentity("GET", keys, { session: owner.session });
    expect([session.status, session.body.code]).toEqual([403, "organization_suspended"]);
    const ingest = await call("POST", "/events", {
      key: org.key,
      body: batch([validEvents.retrieved(org.domain as string)]),
    });
    expect([ingest.status, ingest.body.code]).toEqual([403, "organization_suspended"]);
    expect(await storedEvents(org.id)).toEqual([]);
    expect((await callIdentity("GET", keys, { key: bystander.key })).status).toBe(200);
    const operator = await signInOperatorAdmin();
    const listed = await callIdentity("GET", "/api/v1/identity/admin/organizations?org_type=content_owner&limit=100", {
      session: operator.session,
    });
    expect(listed.body.items.find((item: { id: string }) => item.id === org.id).suspended_at).toBe(
      JSON.parse(suspended.stdout).suspended_at,
    );

    // Suspending again changes nothing and records nothing.
    expect((await cli("org", "suspend", "--id", org.id)).exitCode).toBe(0);
    expect((await cli("org", "resume", "--id", org.id)).exitCode).toBe(0);
    expect(await msUntil(async () => (await byKey()) === 200)).toBeLessThan(1000);
    expect(await bySession()).toBe(200);
    expect(await auditOf(org.id)).toEqual(["organization.suspended", "organization.resumed"]);
  }, 30_000);

  test("an invitation to a suspended organisation cannot be claimed until it is resumed", async () => {
    const org = await createTestOrg();
    const owner = await memberOf(org.id, "owner");
    const invitee = await signIn();
    const invited = await callIdentity("POST", "/api/v1/identity/invites", {
      session: owner.session,
      body: { email: invitee.email },
    });
    expect(invited.status).toBe(201);
    const claim = () =>
      callIdentity("POST", `/api/v1/identity/invites/${invited.body.id}/claim`, { session: invitee.session });
    expect((await cli("org", "suspend", "--id", org.id)).exitCode).toBe(0);
    const refused = await claim();
    expect([refused.status, refused.body.code]).toEqual([403, "organization_suspended"]);
    expect((await cli("org", "resume", "--id", org.id)).exitCode).toBe(0);
    expect((await claim()).status).toBe(200);
  }, 30_000);

  test("an unknown organisation is a usage error (exit 2)", async () => {
    const id = crypto.randomUUID();
    const out = await cli("org", "suspend", "--id", id);
    expect({ exitCode: out.exitCode, stderr: out.stderr }).toMatchObject({ exitCode: 2 });
    expect(out.stderr).toContain(`organisation ${id} does not exist`);
  });
});
