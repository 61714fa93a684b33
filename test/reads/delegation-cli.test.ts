import { describe, expect, test } from "bun:test";
import { cli } from "../support/cli.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";

const summaryFor = (ownerId: string, key: string) =>
  call("GET", `/content-owners/summary?delegated_from=${ownerId}`, { key });

describe("delegation CLI", () => {
  test("grant opens delegated reads, revoke closes them", async () => {
    const owner = await createTestOrg();
    const partner = await createTestOrg({ type: "platform" });
    expect((await summaryFor(owner.id, partner.key)).status).toBe(403);

    const granted = await cli("delegation", "grant", "--grantor", owner.id, "--grantee", partner.id, "--json");
    expect(granted.exitCode).toBe(0);
    const delegation = JSON.parse(granted.stdout);
    expect(delegation).toMatchObject({
      grantor_org_id: owner.id,
      grantee_org_id: partner.id,
      scopes: ["telemetry:read"],
      revoked_at: null,
    });
    const delegated = await summaryFor(owner.id, partner.key);
    expect(delegated.status).toBe(200);
    expect(delegated.body.organization_id).toBe(owner.id);

    const again = await cli("delegation", "grant", "--grantor", owner.id, "--grantee", partner.id);
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toContain("already has an active delegation");

    const revoked = await cli("delegation", "revoke", "--id", delegation.id, "--json");
    expect(revoked.exitCode).toBe(0);
    expect(JSON.parse(revoked.stdout).revoked_at).not.toBeNull();
    expect((await summaryFor(owner.id, partner.key)).status).toBe(403);
  }, 30_000);

  test.each([
    ["a grantor that is not a content owner", "platform", "the grantor must be a content owner"],
    ["scopes that cannot be delegated", "scopes", "cannot be delegated"],
  ])("refuses %s with exit code 2", async (_, variant, message) => {
    const owner = await createTestOrg();
    const partner = await createTestOrg({ type: "platform" });
    const args =
      variant === "platform"
        ? ["delegation", "grant", "--grantor", partner.id, "--grantee", owner.id]
        : ["delegation", "grant", "--grantor", owner.id, "--grantee", partner.id, "--scopes", "identity:write"];
    const out = await cli(...args);
    expect({ exitCode: out.exitCode, stderr: out.stderr }).toMatchObject({ exitCode: 2 });
    expect(out.stderr).toContain(message);
  });

  test("revoking an unknown delegation is a clear error", async () => {
    const out = await cli("delegation", "revoke", "--id", crypto.randomUUID());
    expect(out.exitCode).toBe(2);
    expect(out.stderr).toContain("no delegation with id");
  });
});
