import type { Queryable } from "../../db/sql.ts";

/** The events organisations can subscribe webhooks to (interface spec, Webhook events). */
export const identityEventTypes = [
  "delegation.created",
  "delegation.revoked",
  "delegation_request.created",
  "invite.claimed",
] as const;

export type IdentityEventType = (typeof identityEventTypes)[number];

/**
 * Records an event for an organisation's webhooks in the caller's transaction,
 * so it exists exactly when the change it announces does. Delivery happens later.
 */
export async function enqueueEvent(
  sql: Queryable,
  event: { orgId: string; type: IdentityEventType; data: Record<string, unknown> },
): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    INSERT INTO event_outbox (org_id, event_type, data)
    VALUES (${event.orgId}::uuid, ${event.type}, ${sql.json(event.data as never)})
    RETURNING id`;
  return (row as { id: string }).id;
}
