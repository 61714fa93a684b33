import { t } from "elysia";
import { Email } from "../auth/model.ts";
import { Role } from "../organizations/model.ts";

export const MemberRecord = t.Object({
  user_id: t.String({ format: "uuid" }),
  email: t.String(),
  role: Role,
  created_at: t.Date(),
});

export const RoleBody = t.Object({ role: Role });
export const UserParams = t.Object({ user_id: t.String({ format: "uuid" }) });

export const InviteBody = t.Object({
  email: Email,
  role: t.Optional(Role),
});

export const InviteRecord = t.Object({
  id: t.String({ format: "uuid" }),
  org_id: t.String({ format: "uuid" }),
  email: t.String(),
  role: Role,
  provisioning_org_id: t.String({ format: "uuid" }),
  created_at: t.Date(),
  expires_at: t.Date(),
  claimed_at: t.Nullable(t.Date()),
  claimed_by: t.Nullable(t.String({ format: "uuid" })),
  revoked_at: t.Nullable(t.Date()),
});

export const MyInvite = t.Object({ ...InviteRecord.properties, organization_name: t.String() });

export const ClaimResult = t.Object({
  organization_id: t.String({ format: "uuid" }),
  role: Role,
  invite: InviteRecord,
});
