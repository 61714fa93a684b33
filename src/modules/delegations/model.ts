import { type Static, t } from "elysia";
import { pageQuery } from "../../http/paging.ts";

/** Requests per POST /delegation-requests/bulk call. */
export const maxBulkDelegationRequests = 100;

/** Scopes a delegation can carry: only reads are delegated. */
export const delegableScopes = ["telemetry:read"] as const;
export type DelegableScope = (typeof delegableScopes)[number];

const Uuid = t.String({ format: "uuid" });

/** The scopes a stored delegation or request carries (the service admits only delegable ones). */
const DelegatedScopes = t.Array(t.Unsafe<DelegableScope>(t.String()));

const Scopes = t.Array(t.String({ maxLength: 100 }), {
  minItems: 1,
  maxItems: 10,
  description:
    'Scopes to delegate. Only telemetry:read can be delegated; omitted, the delegation carries ["telemetry:read"].',
});

const Role = t.Union([t.Literal("grantor"), t.Literal("grantee")], {
  description:
    "grantor: the ones the organisation granted (or is asked for); grantee: the ones granted to it (or it asked for). Omitted: both.",
});

/** The query of both lists: one side, or both, paged. */
export const ListQuery = t.Object({ role: t.Optional(Role), ...pageQuery() });

export const GrantBody = t.Object({
  grantee_org_id: t.String({ format: "uuid", description: "the platform or agent organisation that may read" }),
  scopes: t.Optional(Scopes),
});

export const DelegationRecord = t.Object({
  id: Uuid,
  grantor_org_id: t.String({ format: "uuid", description: "the content owner whose data is read" }),
  grantee_org_id: t.String({ format: "uuid", description: "the platform or agent organisation that reads it" }),
  scopes: DelegatedScopes,
  created_at: t.Date(),
  revoked_at: t.Nullable(t.Date({ description: "null while the delegation is active" })),
});

export type Delegation = Static<typeof DelegationRecord>;

export const DelegationRequestBody = t.Object({
  domain: t.String({
    minLength: 1,
    maxLength: 253,
    description: "a domain (or subdomain of one) that a content owner has verified; that owner is asked",
  }),
  scopes: t.Optional(Scopes),
});

const DelegationRequestStatus = t.Union([
  t.Literal("pending"),
  t.Literal("approved"),
  t.Literal("denied"),
  t.Literal("expired"),
]);
export type DelegationRequestStatus = Static<typeof DelegationRequestStatus>;

export const DelegationRequestRecord = t.Object({
  id: Uuid,
  grantor_org_id: t.String({ format: "uuid", description: "the content owner asked: it verified the domain" }),
  grantee_org_id: t.String({ format: "uuid", description: "the organisation that asked" }),
  domain: t.String({ description: "the domain named, in canonical form" }),
  scopes: DelegatedScopes,
  status: DelegationRequestStatus,
  created_at: t.Date(),
  expires_at: t.Date({ description: "30 days after created_at; approving after it answers 410" }),
  resolved_at: t.Nullable(t.Date({ description: "when it was approved, denied or expired" })),
  delegation_id: t.Nullable(t.String({ format: "uuid", description: "the delegation its approval created" })),
});

export type DelegationRequest = Static<typeof DelegationRequestRecord>;

export const BulkBody = t.Array(
  t.Unknown({
    description:
      "a delegation request body, {domain, scopes?}; anything else is answered as an error item (a body past the limits every body has, such as nesting, is refused whole)",
  }),
  {
    minItems: 1,
    maxItems: maxBulkDelegationRequests,
    description: `1 to ${maxBulkDelegationRequests} delegation requests, each filed on its own and answered in input order`,
  },
);

const BulkItemStatus = t.Union([
  t.Literal("created"),
  t.Literal("not_found"),
  t.Literal("conflict"),
  t.Literal("error"),
]);
export type BulkItemStatus = Static<typeof BulkItemStatus>;

export const BulkResult = t.Object({
  items: t.Array(
    t.Object({
      index: t.Integer({ description: "position in the request array" }),
      domain: t.Nullable(t.String({ description: "the domain as sent (null when the item had none)" })),
      status: BulkItemStatus,
      delegation_request: t.Optional(DelegationRequestRecord),
      code: t.Optional(t.String({ description: "the problem code the same request alone would have answered" })),
      reason: t.Optional(t.String({ description: "why the item was not created" })),
    }),
  ),
  summary: t.Object({
    created: t.Integer(),
    not_found: t.Integer(),
    conflict: t.Integer(),
    error: t.Integer(),
  }),
});
