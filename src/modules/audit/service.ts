import type { AuditActor } from "../../core/caller.ts";
import { pageWithTotal, type Queryable } from "../../db/sql.ts";

export interface AuditEntry {
  actor: AuditActor;
  orgId: string | null;
  action: string;
  targetType: string;
  targetId: string | null;
  details?: Record<string, unknown>;
}

export interface AuditEvent {
  id: string;
  occurred_at: Date;
  org_id: string | null;
  actor: AuditActor;
  action: string;
  target: { type: string; id: string | null };
  details: Record<string, unknown>;
}

/** Records one control-plane change; call it in the same transaction as the change. */
export async function recordAudit(sql: Queryable, entry: AuditEntry): Promise<void> {
  await sql`
    INSERT INTO audit_events (org_id, actor_type, actor_id, actor_label, action, target_type, target_id, details)
    VALUES (${entry.orgId}, ${entry.actor.type}, ${entry.actor.id}, ${entry.actor.label}, ${entry.action},
            ${entry.targetType}, ${entry.targetId}, ${sql.json((entry.details ?? {}) as never)})`;
}

export async function listAudit(
  sql: Queryable,
  orgId: string,
  page: { limit: number; offset: number },
): Promise<{ items: AuditEvent[]; total: number }> {
  const { items: rows, total } = await pageWithTotal(
    sql,
    sql<
      {
        id: string;
        occurred_at: Date;
        org_id: string;
        actor_type: AuditActor["type"];
        actor_id: string | null;
        actor_label: string | null;
        action: string;
        target_type: string;
        target_id: string | null;
        details: Record<string, unknown>;
      }[]
    >`
    SELECT * FROM audit_events
    WHERE org_id = ${orgId}::uuid
    ORDER BY occurred_at DESC, id
    LIMIT ${page.limit} OFFSET ${page.offset}`,
    sql`audit_events WHERE org_id = ${orgId}::uuid`,
  );
  return {
    total,
    items: rows.map((row) => ({
      id: row.id,
      occurred_at: row.occurred_at,
      org_id: row.org_id,
      actor: { type: row.actor_type, id: row.actor_id, label: row.actor_label },
      action: row.action,
      target: { type: row.target_type, id: row.target_id },
      details: row.details,
    })),
  };
}
