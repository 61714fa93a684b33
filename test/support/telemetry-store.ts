import { testRuntime } from "./runtime.ts";

export interface StoredEvent {
  event_id: string;
  org_id: string;
  event_type: string;
  source_role: string;
  content_url: string | null;
  content_host: string | null;
  agent_id: string | null;
  session_id: string | null;
  content_id: string | null;
  content_telemetry_id: string | null;
  turn_id: string | null;
  output_id: string | null;
  presentation_id: string | null;
  data: Record<string, unknown>;
  turn: Record<string, unknown> | null;
  event_time: Date;
}

/** Every event stored for a reporting organisation, oldest first. */
export async function storedEvents(orgId: string): Promise<StoredEvent[]> {
  const { ctx } = await testRuntime();
  return ctx.sql<StoredEvent[]>`SELECT * FROM events WHERE org_id = ${orgId}::uuid ORDER BY event_time, event_id`;
}

export async function storedSession(sessionId: string) {
  const { ctx } = await testRuntime();
  const [row] = await ctx.sql`SELECT * FROM sessions WHERE id = ${sessionId}::uuid`;
  return row;
}

export async function sessionCount(orgId: string): Promise<number> {
  const { ctx } = await testRuntime();
  const [row] = await ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM sessions WHERE org_id = ${orgId}::uuid`;
  return row?.n ?? 0;
}
