import type { Delegation } from "../../modules/delegations/model.ts";
import { grantDelegation, revokeDelegation } from "../../modules/delegations/service.ts";
import { BadInputError, defineCommand, listOption, requireUuid } from "../command.ts";
import { asBadInput, operatorCli } from "../operator.ts";

const describeDelegation = (d: Delegation) =>
  `delegation ${d.id}: ${d.grantor_org_id} → ${d.grantee_org_id}  scopes=[${d.scopes.join(",")}]  created=${d.created_at.toISOString()}${d.revoked_at ? `  revoked=${d.revoked_at.toISOString()}` : ""}`;

export const delegationCommands = [
  defineCommand({
    words: ["delegation", "grant"],
    summary: "let a platform or agent organisation read a content owner's telemetry (delegated_from)",
    options: {
      grantor: { type: "string", required: true, description: "content-owner organisation id" },
      grantee: { type: "string", required: true, description: "platform or agent organisation id" },
      scopes: { type: "string", description: "comma-separated scopes (default and only delegable: telemetry:read)" },
    },
    async run(sql, o) {
      const grantorOrgId = requireUuid(o, "grantor");
      const granteeOrgId = requireUuid(o, "grantee");
      const scopes = listOption(o, "scopes");
      return asBadInput(() =>
        grantDelegation(sql, { grantorOrgId, granteeOrgId, scopes, actor: operatorCli, now: new Date() }),
      );
    },
    describe: describeDelegation,
  }),
  defineCommand({
    words: ["delegation", "revoke"],
    summary: "revoke a delegation (delegated reads get 403 at once)",
    options: { id: { type: "string", required: true, description: "delegation id" } },
    async run(sql, o) {
      const id = requireUuid(o, "id");
      const delegation = await revokeDelegation(sql, { id, actor: operatorCli, now: new Date() });
      if (!delegation) throw new BadInputError(`no delegation with id ${id}`);
      return delegation;
    },
    describe: describeDelegation,
  }),
];
