import type { SignatureStatus } from "../../core/signature-status.ts";
import { identifiers, joined } from "../../db/fragments.ts";
import type { Fragment, Queryable } from "../../db/sql.ts";

/** One event as inserted: columns of `events`. */
export interface EventRow {
  /** A Date, or ISO 8601 text for a time a Date cannot hold (microseconds). */
  eventTime: Date | string;
  eventId: string;
  /** The reporting organisation (platform_id on the read side). */
  orgId: string;
  eventType: string;
  sourceRole: string;
  contentUrl: string | null;
  contentHost: string | null;
  /** Known from the envelope or a click token's session; else filled from the claimed session. */
  agentId: string | null;
  /** The session's name as its reporter gave it, or, from a click token, the session's id (sql/067). */
  sessionId: string | null;
  /** The session came from a click token: `sessionId` is already the issuer's session id. */
  sessionFromToken?: boolean;
  contentId: string | null;
  contentTelemetryId: string | null;
  turnId: string | null;
  outputId: string | null;
  presentationId: string | null;
  /** What checking the request's signature against the reporter's manifest found (sql/053). */
  signatureStatus: SignatureStatus;
  data: Record<string, unknown>;
  turn: Record<string, unknown> | null;
}

/**
 * The columns of `events` a reported event fills, with the array type each travels
 * in and how an EventRow provides it. The event store's insert (ingest, loaders,
 * test fixtures) derives from this list: storing one more field is a migration,
 * the rule that sets it, and one line here. The first-event flags are not here:
 * the store computes them (event-store.ts).
 */
export const storedEventColumns = [
  {
    name: "event_time",
    arrayType: "timestamptz",
    of: (e: EventRow) => (typeof e.eventTime === "string" ? e.eventTime : e.eventTime.toISOString()),
  },
  { name: "event_id", arrayType: "uuid", of: (e: EventRow) => e.eventId },
  { name: "org_id", arrayType: "uuid", of: (e: EventRow) => e.orgId },
  { name: "event_type", arrayType: "text", of: (e: EventRow) => e.eventType },
  { name: "source_role", arrayType: "text", of: (e: EventRow) => e.sourceRole },
  { name: "content_url", arrayType: "text", of: (e: EventRow) => e.contentUrl },
  { name: "content_host", arrayType: "text", of: (e: EventRow) => e.contentHost },
  { name: "agent_id", arrayType: "text", of: (e: EventRow) => e.agentId },
  { name: "session_id", arrayType: "uuid", of: (e: EventRow) => e.sessionId },
  { name: "content_id", arrayType: "text", of: (e: EventRow) => e.contentId },
  { name: "content_telemetry_id", arrayType: "text", of: (e: EventRow) => e.contentTelemetryId },
  { name: "turn_id", arrayType: "text", of: (e: EventRow) => e.turnId },
  { name: "output_id", arrayType: "text", of: (e: EventRow) => e.outputId },
  { name: "presentation_id", arrayType: "text", of: (e: EventRow) => e.presentationId },
  { name: "signature_status", arrayType: "text", of: (e: EventRow) => e.signatureStatus },
  // JSON travels as text and is cast on the way in.
  { name: "data", arrayType: "text", cast: "jsonb", of: (e: EventRow) => JSON.stringify(e.data) },
  { name: "turn", arrayType: "text", cast: "jsonb", of: (e: EventRow) => (e.turn ? JSON.stringify(e.turn) : null) },
] as const;

export type StoredEventColumn = (typeof storedEventColumns)[number]["name"];

/** `name, name, …` of the stored columns, for an INSERT or COPY column list. */
export const storedColumnList = (sql: Queryable) =>
  identifiers(
    sql,
    storedEventColumns.map((column) => column.name),
  );

/**
 * The rows as one array per column, so that a batch of any size is one statement
 * with a fixed number of parameters: `(SELECT unnest(array) AS column, …) AS alias`.
 * Unnested in the select list, the arrays advance in step, a row at a time;
 * `unnest(arrays…)` in FROM first copies each array into a tuple store of its own:
 * 100 rows into a table without indexes took 0.30 ms against 0.17 (docs/benchmarks.md).
 */
export function unnestEvents(
  sql: Queryable,
  rows: readonly EventRow[],
  alias: string,
  /** More columns, one value per row: the counting flags the event store computes. */
  extra: readonly { name: string; arrayType: string; values: readonly number[] }[] = [],
) {
  const columns = [
    ...storedEventColumns.map((column) => ({
      name: column.name,
      array: sql`${rows.map((row) => column.of(row))}::${sql.unsafe(column.arrayType)}[]`,
    })),
    ...extra.map((column) => ({
      name: column.name,
      array: sql`${[...column.values]}::${sql.unsafe(column.arrayType)}[]`,
    })),
  ];
  const unnested = columns.map((column) => sql`unnest(${column.array}) AS ${sql(column.name)}`);
  return sql`(SELECT ${joined(sql, unnested)}) AS ${sql(alias)}`;
}

/** The stored columns as selected from `alias`, cast where they travel as text; `override` replaces one. */
export function selectStoredColumns(
  sql: Queryable,
  alias: string,
  override: Partial<Record<StoredEventColumn, Fragment>> = {},
): Fragment {
  const parts = storedEventColumns.map((column) => {
    const replaced = override[column.name];
    if (replaced) return sql`${replaced} AS ${sql(column.name)}`;
    const value = sql`${sql(alias)}.${sql(column.name)}`;
    return "cast" in column ? sql`${value}::${sql.unsafe(column.cast)}` : value;
  });
  return joined(sql, parts);
}
