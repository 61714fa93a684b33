import { randomUUID } from "node:crypto";
import type { Static } from "elysia";
import type { AuditActor } from "../../core/caller.ts";
import { invalid, problem } from "../../core/problem.ts";
import type { SecretBox } from "../../core/secret-box.ts";
import { pageWithTotal, type Queryable, type Sql } from "../../db/sql.ts";
import { recordAudit } from "../audit/service.ts";
import { identityEventTypes } from "../outbox/service.ts";
import type { DeliveryRecord, WebhookRecord } from "./model.ts";
import type { DeliveryStatus } from "./schedule.ts";
import { newSigningSecret } from "./signing.ts";
import { checkWebhookUrl, WebhookUrlError } from "./url-guard.ts";

/** Active endpoints an organisation may have at once (interface spec, Limits). */
export const maxActiveEndpoints = 10;

/** An endpoint as the API shows it: never its secret. */
export type WebhookEndpoint = Static<typeof WebhookRecord>;

/** A delivery with its attempt log, as GET /webhooks/:id/deliveries lists it. */
type Delivery = Static<typeof DeliveryRecord>;

/** The key that seals signing secrets, or 503 where the operator has not configured one. */
export function requireSecrets(secrets: SecretBox | undefined): SecretBox {
  if (!secrets) {
    throw problem("webhooks_unavailable", "webhooks are unavailable: the operator has not set WEBHOOK_SECRET_KEY");
  }
  return secrets;
}

/**
 * The create body, checked before anything is written: a URL the SSRF guard
 * accepts (400 invalid_webhook_url) and known event types (400
 * unknown_event_type listing the allowed ones). Repeated types count once.
 */
export function checkCreateInput(
  input: { url: string; event_types: string[] },
  options: { allowLoopback: boolean },
): { url: string; eventTypes: string[] } {
  let url: string;
  try {
    url = checkWebhookUrl(input.url, options);
  } catch (error) {
    if (!(error instanceof WebhookUrlError)) throw error;
    throw invalid(`url ${error.message}`, [{ path: "/url", message: error.message }], "invalid_webhook_url");
  }
  const allowed: readonly string[] = identityEventTypes;
  const unknown = input.event_types.flatMap((type, index) =>
    allowed.includes(type)
      ? []
      : [{ path: `/event_types/${index}`, message: `unknown event type ${JSON.stringify(type)}` }],
  );
  if (unknown.length > 0) {
    throw invalid(`unknown event types; allowed: ${allowed.join(", ")}`, unknown, "unknown_event_type", {
      allowed_event_types: allowed,
    });
  }
  return { url, eventTypes: [...new Set(input.event_types)] };
}

const endpointColumns = (sql: Queryable) => sql`
  id, org_id AS organization_id, url, event_types, status, disabled_reason, disabled_at, created_at, last_success_at, failing_since,
  paused_until, secret_rotated_at, previous_secret_expires_at`;

/** Serialises endpoint creation and re-enabling per organisation, so the limit holds under concurrency. */
async function lockOrgEndpoints(tx: Queryable, orgId: string): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`webhook-endpoints:${orgId}`}, 0))`;
}

async function requireRoomForOne(tx: Queryable, orgId: string): Promise<void> {
  const [row] = await tx<{ n: number }[]>`
    SELECT count(*)::int AS n FROM webhook_endpoints WHERE org_id = ${orgId}::uuid AND status = 'active'`;
  if ((row?.n ?? 0) >= maxActiveEndpoints) {
    throw problem(
      "webhook_limit_reached",
      `an organisation may have at most ${maxActiveEndpoints} active webhook endpoints; delete one first`,
      { limit: maxActiveEndpoints },
    );
  }
}

/** Creates an endpoint with a new secret, sealed at rest; the raw secret is returned once. */
export async function createEndpoint(
  sql: Sql,
  secrets: SecretBox,
  input: { orgId: string; url: string; eventTypes: string[]; actor: AuditActor },
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  return sql.begin(async (tx) => {
    await lockOrgEndpoints(tx, input.orgId);
    await requireRoomForOne(tx, input.orgId);
    const id = randomUUID();
    const secret = newSigningSecret();
    const [endpoint] = await tx<WebhookEndpoint[]>`
      INSERT INTO webhook_endpoints (id, org_id, url, event_types, secret_key_id, secret_ciphertext)
      VALUES (${id}::uuid, ${input.orgId}::uuid, ${input.url}, ${input.eventTypes}::text[], ${secrets.keyId},
              ${secrets.seal(secret, id)})
      RETURNING ${endpointColumns(tx)}`;
    await recordAudit(tx, {
      actor: input.actor,
      orgId: input.orgId,
      action: "webhook.created",
      targetType: "webhook",
      targetId: id,
      details: { url: input.url, event_types: input.eventTypes },
    });
    return { endpoint: endpoint as WebhookEndpoint, secret };
  });
}

export async function listEndpoints(
  sql: Queryable,
  orgId: string,
  status: "active" | "disabled",
  page: { limit: number; offset: number },
): Promise<{ items: WebhookEndpoint[]; total: number }> {
  return pageWithTotal(
    sql,
    sql<WebhookEndpoint[]>`
      SELECT ${endpointColumns(sql)} FROM webhook_endpoints
      WHERE org_id = ${orgId}::uuid AND status = ${status}
      ORDER BY created_at, id
      LIMIT ${page.limit} OFFSET ${page.offset}`,
    sql`webhook_endpoints WHERE org_id = ${orgId}::uuid AND status = ${status}`,
  );
}

/** One endpoint of the organisation, whatever its status; 404 when it has none with that id. */
export async function getEndpoint(sql: Queryable, orgId: string, id: string, lock = false): Promise<WebhookEndpoint> {
  const [endpoint] = lock
    ? await sql<WebhookEndpoint[]>`
        SELECT ${endpointColumns(sql)} FROM webhook_endpoints WHERE id = ${id}::uuid AND org_id = ${orgId}::uuid
        FOR UPDATE`
    : await sql<WebhookEndpoint[]>`
        SELECT ${endpointColumns(sql)} FROM webhook_endpoints WHERE id = ${id}::uuid AND org_id = ${orgId}::uuid`;
  if (!endpoint) throw problem("webhook_not_found", "this organisation has no such webhook endpoint");
  return endpoint;
}

/** Refuses what a deleted endpoint cannot do any more: 409 webhook_deleted. */
function requireNotDeleted(endpoint: WebhookEndpoint): WebhookEndpoint {
  if (endpoint.disabled_reason === "deleted") {
    throw problem("webhook_deleted", "this webhook endpoint was deleted; create a new one");
  }
  return endpoint;
}

/** Refuses what only an active endpoint can do: 409 webhook_deleted or webhook_disabled otherwise. */
function requireActive(endpoint: WebhookEndpoint): void {
  requireNotDeleted(endpoint);
  if (endpoint.status !== "active") {
    throw problem("webhook_disabled", "this webhook endpoint is disabled for failing; enable it first", {
      disabled_reason: endpoint.disabled_reason,
    });
  }
}

/**
 * Drops an endpoint's pending deliveries. One in flight keeps its lease and
 * finishes: received, it is recorded delivered (queue.ts), else it stays dropped.
 */
async function dropPending(tx: Queryable, endpointId: string): Promise<number> {
  const dropped = await tx`
    UPDATE webhook_deliveries SET status = 'dropped', next_attempt_at = NULL
    WHERE endpoint_id = ${endpointId}::uuid AND status = 'pending'
    RETURNING 1`;
  return dropped.length;
}

/**
 * DELETE: the endpoint is disabled (reason `deleted`) and its pending deliveries
 * are dropped. Deleting a deleted endpoint changes nothing.
 */
export async function deleteEndpoint(sql: Sql, input: { orgId: string; id: string; actor: AuditActor }): Promise<void> {
  await sql.begin(async (tx) => {
    const endpoint = await getEndpoint(tx, input.orgId, input.id, true);
    if (endpoint.disabled_reason === "deleted") return;
    await tx`
      UPDATE webhook_endpoints
      SET status = 'disabled', disabled_reason = 'deleted', disabled_at = now(), paused_until = NULL
      WHERE id = ${input.id}::uuid`;
    const dropped = await dropPending(tx, input.id);
    await recordAudit(tx, {
      actor: input.actor,
      orgId: input.orgId,
      action: "webhook.deleted",
      targetType: "webhook",
      targetId: input.id,
      details: { url: endpoint.url, dropped_deliveries: dropped },
    });
  });
}

/** Re-enables an endpoint disabled for failing (the limit applies again); an active one is returned as it is. */
export async function enableEndpoint(
  sql: Sql,
  input: { orgId: string; id: string; actor: AuditActor },
): Promise<WebhookEndpoint> {
  return sql.begin(async (tx) => {
    await lockOrgEndpoints(tx, input.orgId);
    const endpoint = requireNotDeleted(await getEndpoint(tx, input.orgId, input.id, true));
    if (endpoint.status === "active") return endpoint;
    await requireRoomForOne(tx, input.orgId);
    const [enabled] = await tx<WebhookEndpoint[]>`
      UPDATE webhook_endpoints
      SET status = 'active', disabled_reason = NULL, disabled_at = NULL, failing_since = NULL, paused_until = NULL
      WHERE id = ${input.id}::uuid
      RETURNING ${endpointColumns(tx)}`;
    await recordAudit(tx, {
      actor: input.actor,
      orgId: input.orgId,
      action: "webhook.enabled",
      targetType: "webhook",
      targetId: input.id,
    });
    return enabled as WebhookEndpoint;
  });
}

/**
 * A new signing secret. The previous one keeps signing beside it for
 * `overlapHours` (each delivery then carries both signatures), so receivers can
 * switch without missing a delivery; a rotation during an overlap ends the older one.
 */
export async function rotateSecret(
  sql: Sql,
  secrets: SecretBox,
  input: { orgId: string; id: string; overlapHours: number; actor: AuditActor },
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  return sql.begin(async (tx) => {
    requireNotDeleted(await getEndpoint(tx, input.orgId, input.id, true));
    const [current] = await tx<{ secret_ciphertext: Uint8Array; secret_key_id: string }[]>`
      SELECT secret_ciphertext, secret_key_id FROM webhook_endpoints WHERE id = ${input.id}::uuid`;
    // The outgoing secret is sealed again, under the current key, for its overlap.
    let previous: Uint8Array | null = null;
    if (input.overlapHours > 0 && current && current.secret_key_id === secrets.keyId) {
      previous = secrets.seal(secrets.open(current.secret_ciphertext, input.id), input.id);
    }
    const secret = newSigningSecret();
    const [rotated] = await tx<WebhookEndpoint[]>`
      UPDATE webhook_endpoints SET
        secret_ciphertext = ${secrets.seal(secret, input.id)},
        secret_key_id = ${secrets.keyId},
        previous_secret_ciphertext = ${previous},
        previous_secret_expires_at = CASE WHEN ${previous !== null}::boolean
          THEN now() + make_interval(hours => ${input.overlapHours}::int) END,
        secret_rotated_at = now()
      WHERE id = ${input.id}::uuid
      RETURNING ${endpointColumns(tx)}`;
    await recordAudit(tx, {
      actor: input.actor,
      orgId: input.orgId,
      action: "webhook.secret_rotated",
      targetType: "webhook",
      targetId: input.id,
      details: { previous_secret_expires_at: (rotated as WebhookEndpoint).previous_secret_expires_at },
    });
    return { endpoint: rotated as WebhookEndpoint, secret };
  });
}

const deliveryColumns = (sql: Queryable, attemptsShown: number) => sql`
  d.id, d.endpoint_id AS webhook_id, d.event_id, d.event_type, d.event_created_at, d.data, d.status, d.attempt_count,
  d.next_attempt_at, d.last_attempt_at, d.last_status_code, d.last_error, d.delivered_at, d.created_at,
  coalesce((
    SELECT json_agg(json_build_object(
             'attempted_at', a.attempted_at, 'succeeded', a.succeeded, 'status_code', a.status_code,
             'latency_ms', a.latency_ms, 'error', a.error, 'response_sample', a.response_sample)
           ORDER BY a.attempted_at DESC, a.id)
    FROM (SELECT * FROM webhook_attempts WHERE delivery_id = d.id ORDER BY attempted_at DESC, id LIMIT ${attemptsShown}) a
  ), '[]'::json) AS attempts`;

/** Attempts shown per delivery in a list; one delivery shows up to `attemptsPerDelivery`. */
export const attemptsPerListedDelivery = 10;
export const attemptsPerDelivery = 100;

const withAttemptDates = (delivery: Delivery): Delivery => ({
  ...delivery,
  attempts: delivery.attempts.map((a) => ({ ...a, attempted_at: new Date(a.attempted_at) })),
});

/** The endpoint's deliveries, newest first, optionally of one status, each with its latest attempts. */
export async function listDeliveries(
  sql: Queryable,
  input: { orgId: string; endpointId: string; status?: DeliveryStatus; page: { limit: number; offset: number } },
): Promise<{ items: Delivery[]; total: number }> {
  await getEndpoint(sql, input.orgId, input.endpointId);
  const status = input.status ?? null;
  const { items, total } = await pageWithTotal(
    sql,
    sql<Delivery[]>`
      SELECT ${deliveryColumns(sql, attemptsPerListedDelivery)} FROM webhook_deliveries d
      WHERE d.endpoint_id = ${input.endpointId}::uuid AND (${status}::text IS NULL OR d.status = ${status})
      ORDER BY d.created_at DESC, d.id
      LIMIT ${input.page.limit} OFFSET ${input.page.offset}`,
    sql`webhook_deliveries
      WHERE endpoint_id = ${input.endpointId}::uuid AND (${status}::text IS NULL OR status = ${status})`,
  );
  return { items: items.map(withAttemptDates), total };
}

export async function getDelivery(
  sql: Queryable,
  input: { orgId: string; endpointId: string; deliveryId: string },
): Promise<Delivery> {
  await getEndpoint(sql, input.orgId, input.endpointId);
  const [delivery] = await sql<Delivery[]>`
    SELECT ${deliveryColumns(sql, attemptsPerDelivery)} FROM webhook_deliveries d
    WHERE d.id = ${input.deliveryId}::uuid AND d.endpoint_id = ${input.endpointId}::uuid`;
  if (!delivery) throw problem("delivery_not_found", "this webhook endpoint has no such delivery");
  return withAttemptDates(delivery);
}

/**
 * Sends a delivery again, soon (the next sweep), with the same delivery id so
 * receivers can still dedupe. A finished delivery (delivered, dead, dropped)
 * starts a new cycle of up to 8 attempts; a pending one is made due now. One
 * being sent right now is 409 delivery_in_flight, also when it was dropped while
 * in flight and its endpoint enabled again since: it would be sent twice at once.
 */
export async function redeliver(
  sql: Sql,
  input: { orgId: string; endpointId: string; deliveryId: string },
): Promise<Delivery> {
  await sql.begin(async (tx) => {
    requireActive(await getEndpoint(tx, input.orgId, input.endpointId, true));
    const [row] = await tx<{ status: DeliveryStatus; in_flight: boolean }[]>`
      SELECT status, coalesce(leased_until > now(), false) AS in_flight FROM webhook_deliveries
      WHERE id = ${input.deliveryId}::uuid AND endpoint_id = ${input.endpointId}::uuid
      FOR UPDATE`;
    if (!row) throw problem("delivery_not_found", "this webhook endpoint has no such delivery");
    if (row.in_flight) {
      throw problem("delivery_in_flight", "this delivery is being sent right now; ask again in a moment");
    }
    await tx`
      UPDATE webhook_deliveries SET
        attempt_count = CASE WHEN status = 'pending' THEN attempt_count ELSE 0 END,
        delivered_at = CASE WHEN status = 'pending' THEN delivered_at END,
        status = 'pending', next_attempt_at = now(), leased_until = NULL, lease_id = NULL
      WHERE id = ${input.deliveryId}::uuid`;
  });
  return getDelivery(sql, input);
}

/** Queues a `ping` event for this one endpoint, whatever it subscribes to. */
export async function ping(sql: Sql, input: { orgId: string; endpointId: string }): Promise<Delivery> {
  const deliveryId = await sql.begin(async (tx) => {
    requireActive(await getEndpoint(tx, input.orgId, input.endpointId, true));
    const [row] = await tx<{ id: string }[]>`
      INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, event_created_at, data, next_attempt_at)
      VALUES (${input.endpointId}::uuid, ${randomUUID()}::uuid, 'ping', now(),
              ${tx.json({ webhook_id: input.endpointId, message: "a test event sent on request" })}, now())
      RETURNING id`;
    return (row as { id: string }).id;
  });
  return getDelivery(sql, { ...input, deliveryId });
}
