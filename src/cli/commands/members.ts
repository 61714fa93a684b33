import { Value } from "@sinclair/typebox/value";
import { isMemberRole, memberRoles } from "../../core/organizations.ts";
import { Email } from "../../modules/auth/model.ts";
import { findOrCreateUser } from "../../modules/auth/users.ts";
import { addMemberAs } from "../../modules/members/service.ts";
import { defineCommand, requireString, UsageError } from "../command.ts";
import { operatorCli, requireOrganization } from "../operator.ts";

/**
 * How an organisation the CLI created gets its first people: invitations take an
 * owner's or admin's session, and it has no one yet.
 */
export const memberCommands = [
  defineCommand({
    words: ["member", "add"],
    summary: "make a user (by e-mail; created as at a first sign-in) a member of an organisation",
    options: {
      org: { type: "string", required: true, description: "organisation id" },
      email: { type: "string", required: true, description: "the user's e-mail address" },
      role: { type: "string", description: `${memberRoles.join(" | ")} (default member; a higher role held is kept)` },
    },
    async run(sql, o) {
      const email = requireString(o, "email");
      // The addresses sign-in takes: one added here can sign in as this user.
      if (!Value.Check(Email, email))
        throw new UsageError("--email must be an e-mail address of at most 254 characters");
      const role = o.role === undefined ? "member" : requireString(o, "role");
      if (!isMemberRole(role)) throw new UsageError(`--role must be one of ${memberRoles.join(", ")}`);
      const org = await requireOrganization(sql, o, "org");
      const member = await sql.begin(async (tx) => {
        const user = await findOrCreateUser(tx, email);
        return addMemberAs(tx, { orgId: org.id, userId: user.id, role, actor: operatorCli });
      });
      return { org_id: org.id, ...member };
    },
    describe: (m) =>
      m.previous_role === null
        ? `${m.email} (user ${m.user_id}) is now ${m.role} of organisation ${m.org_id}`
        : m.previous_role === m.role
          ? `${m.email} (user ${m.user_id}) is already ${m.role} of organisation ${m.org_id}: nothing changed`
          : `${m.email} (user ${m.user_id}) is now ${m.role} of organisation ${m.org_id}, was ${m.previous_role}`,
  }),
];
