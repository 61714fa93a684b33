import { type TSchema, t } from "elysia";
import type { IdentityEventType } from "./service.ts";

const Uuid = t.String({ format: "uuid" });
/** Dates in `data` travel as JSON: ISO 8601 text. */
const Instant = t.String({ format: "date-time" });
const Scopes = t.Array(t.String(), { description: "the delegated scopes, e.g. telemetry:read" });

const DelegationAnnounced = t.Object({
  delegation: t.Object({ id: Uuid, grantor_org_id: Uuid, grantee_org_id: Uuid, scopes: Scopes }),
});

/**
 * The `data` of each webhook event type, as the service writes it to
 * `event_outbox` and delivers it: the OpenAPI document's `webhooks` are built
 * from these, and the tests that make each event check it against them.
 */
export const webhookEventData = {
  "delegation.created": DelegationAnnounced,
  "delegation.revoked": DelegationAnnounced,
  "delegation_request.created": t.Object({
    delegation_request: t.Object({
      id: Uuid,
      grantor_org_id: Uuid,
      grantee_org_id: Uuid,
      domain: t.String(),
      scopes: Scopes,
      created_at: Instant,
      expires_at: Instant,
    }),
  }),
  "invite.claimed": t.Object({
    invite: t.Object({
      id: Uuid,
      organization_id: Uuid,
      email: t.String(),
      role: t.Union([t.Literal("owner"), t.Literal("admin"), t.Literal("member")]),
      claimed_at: Instant,
    }),
    user_id: Uuid,
  }),
  ping: t.Object({ webhook_id: Uuid, message: t.String() }),
} satisfies Record<IdentityEventType | "ping", TSchema>;

export type WebhookEventType = keyof typeof webhookEventData;

/** Who gets each event, and when: the OpenAPI document's words for it. */
export const webhookEventSummaries: Record<WebhookEventType, string> = {
  "delegation.created": "A delegation was granted or a request approved; sent to both organisations",
  "delegation.revoked": "A delegation was revoked; sent to both organisations",
  "delegation_request.created": "A platform or agent asked for delegated access; sent to the content owner (grantor)",
  "invite.claimed": "An invitation a partner provisioned was claimed; sent to the provisioning organisation",
  ping: "A test event, sent to one endpoint on request (POST /api/v1/identity/webhooks/{id}/ping)",
};
