import { describe, expect, test } from "bun:test";
import type { ProblemError, problemCodes } from "../../src/core/problem.ts";
import { findActiveDelegation, grantDelegation, revokeDelegation } from "../../src/modules/delegations/service.ts";
import { createTestOrg, testChange } from "../support/fixtures.ts";
import { rejectionOf } from "../support/rejection.ts";
import { testRuntime } from "../support/runtime.ts";

/**
 * The service calls as the operator CLI makes them (the HTTP routes are in
 * test/identity/delegations.test.ts): any grantor, and revocation by id alone.
 */
describe("delegation service", () => {
  test("a grant defaults to telemetry:read, is unique per active pair, and revocation by id is idempotent", async () => {
    const { ctx } = await testRuntime();
    const owner = await createTestOrg();
    const platform = await createTestOrg({ type: "platform" });
    const granted = await grantDelegation(ctx.sql, {
      grantorOrgId: owner.id,
      granteeOrgId: platform.id,
      ...testChange(),
    });
    expect(granted).toMatchObject({
      grantor_org_id: owner.id,
      grantee_org_id: platform.id,
      scopes: ["telemetry:read"],
    });
    expect(granted.revoked_at).toBeNull();
    expect(await findActiveDelegation(ctx.sql, owner.id, platform.id)).toEqual(granted);
    const conflict = (await rejectionOf(
      grantDelegation(ctx.sql, { grantorOrgId: owner.id, granteeOrgId: platform.id, ...testChange() }),
    )) as ProblemError;
    expect(conflict.code).toBe("delegation_exists");

    const revoked = await revokeDelegation(ctx.sql, { id: granted.id, ...testChange() });
    expect(revoked?.revoked_at).toBeInstanceOf(Date);
    const again = await revokeDelegation(ctx.sql, { id: granted.id, ...testChange() });
    expect(again?.revoked_at).toEqual(revoked?.revoked_at as Date);
    expect(await findActiveDelegation(ctx.sql, owner.id, platform.id)).toBeUndefined();
    expect(await revokeDelegation(ctx.sql, { id: crypto.randomUUID(), ...testChange() })).toBeUndefined();
    const [audit] = await ctx.sql<{ actor_type: string; actor_label: string }[]>`
      SELECT actor_type, actor_label FROM audit_events WHERE target_id = ${granted.id} AND action = 'delegation.revoked'`;
    expect(audit).toEqual({ actor_type: "system", actor_label: "test" });
  });

  test("grants that cannot exist are refused with the code HTTP would answer, and nothing is stored", async () => {
    const { ctx } = await testRuntime();
    const owner = await createTestOrg();
    const otherOwner = await createTestOrg();
    const agent = await createTestOrg({ type: "agent" });
    const cases: [Parameters<typeof grantDelegation>[1], keyof typeof problemCodes][] = [
      [
        { grantorOrgId: owner.id, granteeOrgId: agent.id, scopes: ["telemetry:write"], ...testChange() },
        "validation_failed",
      ],
      [{ grantorOrgId: owner.id, granteeOrgId: agent.id, scopes: [], ...testChange() }, "validation_failed"],
      [{ grantorOrgId: owner.id, granteeOrgId: owner.id, ...testChange() }, "invalid_grantee"],
      [{ grantorOrgId: agent.id, granteeOrgId: owner.id, ...testChange() }, "content_owner_only"],
      [{ grantorOrgId: owner.id, granteeOrgId: otherOwner.id, ...testChange() }, "invalid_grantee"],
      [{ grantorOrgId: owner.id, granteeOrgId: crypto.randomUUID(), ...testChange() }, "organization_not_found"],
      [{ grantorOrgId: crypto.randomUUID(), granteeOrgId: agent.id, ...testChange() }, "organization_not_found"],
    ];
    for (const [input, code] of cases) {
      expect(((await rejectionOf(grantDelegation(ctx.sql, input))) as ProblemError).code).toBe(code);
    }
    expect(await findActiveDelegation(ctx.sql, owner.id, agent.id)).toBeUndefined();
  });
});
