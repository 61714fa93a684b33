import { t } from "elysia";
import { Name } from "../../http/text.ts";
import { Email } from "../auth/model.ts";
import { DomainRecord } from "../domains/model.ts";
import { InviteRecord } from "../members/model.ts";

export const ProvisionBody = t.Object({
  name: Name({ minLength: 1, maxLength: 200 }),
  domains: t.Array(t.String({ minLength: 1, maxLength: 253 }), {
    minItems: 1,
    maxItems: 20,
    description: "domains the partner attests: created verified (partner_attestation)",
  }),
  owner_email: Email,
});

const ProvisionedOrganization = t.Object({
  id: t.String({ format: "uuid" }),
  name: t.String(),
  org_type: t.Literal("content_owner"),
  created_at: t.Date(),
  provisioned_by: t.String({ format: "uuid" }),
});

export const Provisioned = t.Object({
  organization: ProvisionedOrganization,
  domains: t.Array(DomainRecord),
  invite: InviteRecord,
});

export const ProvisionedListItem = t.Object({
  id: t.String({ format: "uuid" }),
  name: t.String(),
  org_type: t.String(),
  created_at: t.Date(),
});

/** The owner a partner provisioned, named in the path. */
export const OrgParams = t.Object({ org_id: t.String({ format: "uuid" }) });

export const AttestParams = t.Object({
  org_id: t.String({ format: "uuid" }),
  domain: t.String({ minLength: 1, maxLength: 253 }),
});

export const TrustedPartnerRecord = t.Object({
  org_id: t.String({ format: "uuid" }),
  name: t.String(),
  enabled_by: t.String(),
  enabled_at: t.Date(),
});
