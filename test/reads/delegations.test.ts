import { describe, expect, test } from "bun:test";
import {
  DelegationConflictError,
  findActiveDelegation,
  grantDelegation,
  InvalidDelegationError,
  revokeDelegation,
} from "../../src/modules/delegations/service.ts";
import { OrganizationNotFoundError } from "../../src/modules/keys/service.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { rejectionOf } from "../support/rejection.ts";
import { testRuntime } from "../support/runtime.ts";

describe("delegations", () => {
  test("a grant defaults to telemetry:read, is unique per active pair, and revocation is idempotent", async () => {
    const { ctx } = await testRuntime();
    const owner = await createTestOrg();
    const platform = await createTestOrg({ type: "platform" });
    const granted = await grantDelegation(ctx.sql, { grantorOrgId: owner.id, granteeOrgId: platform.id });
    expect(granted).toMatchObject({
      grantor_org_id: owner.id,
      grantee_org_id: platform.id,
      scopes: ["telemetry:read"],
    });
    expect(granted.revoked_at).toBeNull();
    expect(await findActiveDelegation(ctx.sql, owner.id, platform.id)).toEqual(granted);
    expect(
      await rejectionOf(grantDelegation(ctx.sql, { grantorOrgId: owner.id, granteeOrgId: platform.id })),
    ).toBeInstanceOf(DelegationConflictError);

    const revoked = await revokeDelegation(ctx.sql, granted.id);
    expect(revoked?.revoked_at).toBeInstanceOf(Date);
    expect((await revokeDelegation(ctx.sql, granted.id))?.revoked_at).toEqual(revoked?.revoked_at as Date);
    expect(await findActiveDelegation(ctx.sql, owner.id, platform.id)).toBeUndefined();
    expect(await revokeDelegation(ctx.sql, crypto.randomUUID())).toBeUndefined();
    // Only the grantor's own delegation matches when the grantor is given.
    const again = await grantDelegation(ctx.sql, {
      grantorOrgId: owner.id,
      granteeOrgId: platform.id,
      scopes: ["telemetry:read"],
    });
    expect(await revokeDelegation(ctx.sql, again.id, platform.id)).toBeUndefined();
    expect(await findActiveDelegation(ctx.sql, owner.id, platform.id)).toEqual(again);
  });

  test("grants that cannot exist are refused", async () => {
    const { ctx } = await testRuntime();
    const owner = await createTestOrg();
    const otherOwner = await createTestOrg();
    const agent = await createTestOrg({ type: "agent" });
    const cases: [Parameters<typeof grantDelegation>[1], unknown][] = [
      [{ grantorOrgId: owner.id, granteeOrgId: agent.id, scopes: ["telemetry:write"] }, InvalidDelegationError],
      [{ grantorOrgId: owner.id, granteeOrgId: agent.id, scopes: [] }, InvalidDelegationError],
      [{ grantorOrgId: owner.id, granteeOrgId: owner.id }, InvalidDelegationError],
      [{ grantorOrgId: agent.id, granteeOrgId: owner.id }, InvalidDelegationError],
      [{ grantorOrgId: owner.id, granteeOrgId: otherOwner.id }, InvalidDelegationError],
      [{ grantorOrgId: owner.id, granteeOrgId: crypto.randomUUID() }, OrganizationNotFoundError],
    ];
    for (const [input, error] of cases) {
      expect(await rejectionOf(grantDelegation(ctx.sql, input))).toBeInstanceOf(error as typeof Error);
    }
    expect(await findActiveDelegation(ctx.sql, owner.id, agent.id)).toBeUndefined();
  });
});
