import { t } from "elysia";
import { type WebhookEventType, webhookEventData, webhookEventSummaries } from "../outbox/model.ts";
import { identityEventTypes } from "../outbox/service.ts";
import { maxAttempts, retryDelayAfter } from "./schedule.ts";
import { deliveryTimeoutMs, responseSampleBytes } from "./sender.ts";
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
    t.Date({
      description:
        "the first failed attempt since the last success or the last 13 hours without an attempt; null when healthy",
    }),
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

const Attempt = t.Object({
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

const signatureHex = { type: "string", pattern: "^[0-9a-f]{64}$" };

/** The headers of every delivery (README, Webhooks), as OpenAPI header parameters. */
const deliveryHeaderParameters = (eventType: string) => [
  {
    name: "X-Svc-Signature",
    in: "header",
    required: true,
    description:
      "hex HMAC-SHA256 of `{X-Svc-Timestamp}.{raw body}`, keyed with the endpoint's current secret (the whole whsec_… string as UTF-8). Verify it on the raw body, in constant time.",
    schema: signatureHex,
  },
  {
    name: "X-Svc-Signature-Previous",
    in: "header",
    required: false,
    description:
      "during a secret rotation's overlap only (WEBHOOK_SECRET_OVERLAP_HOURS): the same signature keyed with the rotated-out secret",
    schema: signatureHex,
  },
  {
    name: "X-Svc-Timestamp",
    in: "header",
    required: true,
    description:
      "when this attempt was made, in Unix seconds (decimal digits); each attempt is signed anew. Refuse one more than about 5 minutes from your clock.",
    schema: { type: "string", pattern: "^[0-9]+$", example: "1795000000" },
  },
  {
    name: "X-Svc-Event-Type",
    in: "header",
    required: true,
    description: "the event's type, as in the body",
    schema: { type: "string", const: eventType },
  },
  {
    name: "X-Svc-Delivery-Id",
    in: "header",
    required: true,
    description:
      "the delivery's id: the same on every attempt and redelivery. Delivery is at least once: drop ids already processed.",
    schema: { type: "string", format: "uuid" },
  },
];

/** A wait in the words the docs use: "5 minutes", "2 hours". */
const inWords = (ms: number) => {
  const [amount, unit] = ms % 3_600_000 === 0 ? [ms / 3_600_000, "hour"] : [ms / 60_000, "minute"];
  return `${amount} ${unit}${amount === 1 ? "" : "s"}`;
};

/** Success, retries and dead-lettering, from the constants the sweep runs on. */
const deliveryRules = (() => {
  const waits = Array.from({ length: maxAttempts - 1 }, (_, i) => retryDelayAfter(i + 1) as number);
  const last = waits.at(-1) as number;
  const first = waits.slice(0, waits.indexOf(last)).map(inWords).join(", ");
  return `Success is any 2xx within ${deliveryTimeoutMs / 1000} s. A failed attempt is retried ${first}, then every ${inWords(last)} later; the ${maxAttempts}th failure dead-letters the delivery. Redirects are never followed.`;
})();

/**
 * The OpenAPI 3.1 `webhooks` of the document: one POST per event type, with its
 * envelope, the `data` of webhookEventData, the signing headers and what counts
 * as delivered.
 */
export function documentedWebhooks(): Record<string, unknown> {
  return Object.fromEntries(
    (Object.keys(webhookEventData) as WebhookEventType[]).map((type) => [
      type,
      {
        post: {
          summary: webhookEventSummaries[type],
          description: `POST of the JSON envelope to ${type === "ping" ? "the one endpoint pinged, whatever it subscribes to" : "each endpoint subscribed to this type"}. ${deliveryRules}`,
          tags: ["Webhooks"],
          parameters: deliveryHeaderParameters(type),
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: t.Object({
                  id: t.String({
                    format: "uuid",
                    description: "the event's id: the same for every endpoint it goes to",
                  }),
                  type: t.Literal(type),
                  created_at: t.String({ format: "date-time", description: "when the event happened" }),
                  data: webhookEventData[type],
                }),
              },
            },
          },
          responses: {
            "2XX": {
              description: `delivered: any 2xx within ${deliveryTimeoutMs / 1000} s; the first ${responseSampleBytes} bytes of the body are kept`,
            },
          },
        },
      },
    ]),
  );
}
