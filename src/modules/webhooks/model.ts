import { t } from "elysia";
import { identityEventTypes } from "../outbox/service.ts";
import { maxUrlLength } from "./url-guard.ts";

const eventTypeList = identityEventTypes.join(", ");

export const CreateWebhook = t.Object({
  url: t.String({
    minLength: 1,
    maxLength: maxUrlLength,
    description:
      "https:// URL naming its host (no IP address, user name, password or fragment); 400 invalid_webhook_url otherwise",
  }),
  event_types: t.Array(t.String({ minLength: 1, maxLength: 100 }), {
    minItems: 1,
    maxItems: 20,
    description: `events to receive, among ${eventTypeList}; others answer 400 unknown_event_type`,
  }),
});

export const WebhookParams = t.Object({ id: t.String({ format: "uuid" }) });
export const DeliveryParams = t.Object({
  id: t.String({ format: "uuid" }),
  delivery_id: t.String({ format: "uuid" }),
});

export const WebhookListQuery = t.Object({
  status: t.Optional(
    t.Union([t.Literal("active"), t.Literal("disabled")], {
      default: "active",
      description: "active endpoints (default), or disabled ones (deleted, or disabled for failing)",
    }),
  ),
});

const DeliveryStatus = t.Union(
  [t.Literal("pending"), t.Literal("delivered"), t.Literal("dead"), t.Literal("dropped")],
  {
    description:
      "pending (due or retry scheduled), delivered (a 2xx came), dead (8 attempts failed), dropped (its endpoint was deleted or disabled)",
  },
);

export const DeliveryListQuery = t.Object({ status: t.Optional(DeliveryStatus) });

export const WebhookRecord = t.Object({
  id: t.String({ format: "uuid" }),
  organization_id: t.String({ format: "uuid" }),
  url: t.String(),
  event_types: t.Array(t.String()),
  status: t.Union([t.Literal("active"), t.Literal("disabled")]),
  disabled_reason: t.Nullable(
    t.Union([t.Literal("deleted"), t.Literal("failing")], {
      description: "deleted: by DELETE; failing: every attempt failed for WEBHOOK_DISABLE_AFTER_DAYS (5 days)",
    }),
  ),
  disabled_at: t.Nullable(t.Date()),
  created_at: t.Date(),
  last_success_at: t.Nullable(t.Date({ description: "the latest attempt that got a 2xx" })),
  failing_since: t.Nullable(
    t.Date({ description: "the first failed attempt since the last success; null when healthy" }),
  ),
  paused_until: t.Nullable(
    t.Date({ description: "deliveries wait until then after an attempt got no answer (timeout, refused, DNS, TLS)" }),
  ),
  secret_rotated_at: t.Nullable(t.Date()),
  previous_secret_expires_at: t.Nullable(
    t.Date({ description: "until then deliveries are signed with the new and the previous secret" }),
  ),
});

export const CreatedWebhook = t.Object({
  ...WebhookRecord.properties,
  secret: t.String({ description: "the signing secret (whsec_…): shown only in this response" }),
});

export const Attempt = t.Object({
  attempted_at: t.Date(),
  succeeded: t.Boolean(),
  status_code: t.Nullable(t.Integer({ description: "null when no HTTP answer came" })),
  latency_ms: t.Integer(),
  error: t.Nullable(
    t.String({ description: "short reason: status 500, no answer within 10 s, connection refused, …" }),
  ),
  response_sample: t.Nullable(t.String({ description: "the first 1 KiB of the response body" })),
});

export const DeliveryRecord = t.Object({
  id: t.String({ format: "uuid", description: "X-Svc-Delivery-Id: the same on every attempt" }),
  webhook_id: t.String({ format: "uuid" }),
  event_id: t.String({ format: "uuid", description: "the envelope's id" }),
  event_type: t.String(),
  event_created_at: t.Date(),
  data: t.Record(t.String(), t.Unknown(), { description: "the envelope's data" }),
  status: DeliveryStatus,
  attempt_count: t.Integer({
    description: "attempts in the current cycle (8 failed: dead); a redelivery starts a new cycle",
  }),
  next_attempt_at: t.Nullable(t.Date()),
  last_attempt_at: t.Nullable(t.Date()),
  last_status_code: t.Nullable(t.Integer()),
  last_error: t.Nullable(t.String()),
  delivered_at: t.Nullable(t.Date()),
  created_at: t.Date(),
  attempts: t.Array(Attempt, { description: "the attempt log, newest first" }),
});
