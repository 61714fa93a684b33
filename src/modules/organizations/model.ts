import { t } from "elysia";
import { pageQuery } from "../../http/paging.ts";
import { Name } from "../../http/text.ts";
import { DomainRecord } from "../domains/model.ts";

export const OrgType = t.Union([t.Literal("content_owner"), t.Literal("platform"), t.Literal("agent")]);
export const Role = t.Union([t.Literal("owner"), t.Literal("admin"), t.Literal("member")]);

export const CreateOrganization = t.Object({
  name: Name({ minLength: 1, maxLength: 200 }),
  org_type: OrgType,
  domain: t.Optional(
    t.String({ minLength: 1, maxLength: 253, description: "required for content_owner; registered, not yet verified" }),
  ),
});

/** The organisation itself, as each of its records below begins. */
export const Organization = t.Object({
  id: t.String({ format: "uuid" }),
  name: t.String(),
  org_type: OrgType,
  created_at: t.Date(),
});

export const OrganizationRecord = t.Object({ ...Organization.properties, role: Role });

const suspendedAt = t.Nullable(
  t.Date({
    description:
      "when the operator suspended it (CLI org suspend): its keys and sessions are refused; null when active",
  }),
);

/** An organisation in its member's list: with the member's role, and whether it is suspended. */
export const MemberOrganizationRecord = t.Object({ ...OrganizationRecord.properties, suspended_at: suspendedAt });

export const AdminOrganizationRecord = t.Object({
  ...Organization.properties,
  verified_domains: t.Array(t.String()),
  members: t.Integer(),
  suspended_at: suspendedAt,
});

export const CreatedOrganization = t.Object({
  ...OrganizationRecord.properties,
  domains: t.Array(t.Object({ domain: t.String(), state: t.Union([t.Literal("registered"), t.Literal("verified")]) })),
});

export const OrganizationDetail = t.Object({
  ...Organization.properties,
  role: t.Nullable(Role),
  domains: t.Array(DomainRecord),
});

export const AdminOrganizationsQuery = t.Object({ org_type: t.Optional(OrgType), ...pageQuery() });
