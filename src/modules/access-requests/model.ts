import { t } from "elysia";
import { pageQuery } from "../../http/paging.ts";
import { Name, Text } from "../../http/text.ts";
import { Email } from "../auth/model.ts";

export const AccessRequestBody = t.Object({
  org_name: Name({ minLength: 1, maxLength: 200 }),
  admin_email: Email,
  use_case: Text({ minLength: 1, maxLength: 4000 }),
});

export const AccessRequestStatus = t.Union([t.Literal("pending"), t.Literal("approved"), t.Literal("rejected")]);
export const AccessRequestType = t.Union([t.Literal("platform"), t.Literal("agent")]);

export const AccessRequestRecord = t.Object({
  id: t.String({ format: "uuid" }),
  org_type: AccessRequestType,
  user_id: t.String({ format: "uuid" }),
  org_name: t.String(),
  admin_email: t.String(),
  use_case: t.String(),
  status: AccessRequestStatus,
  created_at: t.Date(),
  reviewed_at: t.Nullable(t.Date()),
  reviewed_by: t.Nullable(t.String({ description: "e-mail of the reviewing operator admin" })),
  reviewer_note: t.Nullable(t.String()),
  approved_org_id: t.Nullable(t.String({ format: "uuid" })),
});

export const ReviewBody = t.Optional(
  t.Object({ note: t.Optional(Text({ maxLength: 4000, description: "reviewer note, shown to the requester" })) }),
);

export const AccessRequestListQuery = t.Object({
  status: t.Optional(AccessRequestStatus),
  org_type: t.Optional(AccessRequestType),
  ...pageQuery(),
});
