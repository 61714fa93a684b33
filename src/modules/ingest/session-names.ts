import type { Fragment, Queryable } from "../../db/sql.ts";

/**
 * Sessions are named per organisation (sql/067): a reporter's name for its
 * session is the session's id, unless another organisation's session already had
 * that id when the name was first used; then `wire_id` holds the name.
 */
export const sessionName = (sql: Queryable, table?: string): Fragment =>
  table === undefined ? sql`coalesce(wire_id, id)` : sql`coalesce(${sql(table)}.wire_id, ${sql(table)}.id)`;

/** The condition selecting the sessions of `orgId` with one of these names (an expression index serves it). */
export const sessionsNamed = (sql: Queryable, orgId: string, names: readonly string[]): Fragment =>
  sql`org_id = ${orgId}::uuid AND ${sessionName(sql)} = ANY (${names}::uuid[])`;
