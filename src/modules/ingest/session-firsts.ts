import type { Queryable } from "../../db/sql.ts";

// Session-first bookkeeping (sql/013_session_firsts_set_based.sql). `events` has
// no trigger for it: every statement that inserts events hands the rows it
// actually inserted to record_session_firsts, once per statement.

/** The columns of `events` the bookkeeping needs: RETURNING list of an events insert. */
export const sessionFirstColumns = (sql: Queryable) =>
  sql`event_time, session_id, content_host, content_url, source_role, org_id, agent_id`;

/**
 * A SELECT that records the session firsts of every row of `relation` (a CTE or
 * table with `sessionFirstColumns`), e.g. the RETURNING of an events insert.
 */
export const recordSessionFirsts = (sql: Queryable, relation: string) => sql`
  SELECT record_session_firsts(
    array_agg(event_time), array_agg(session_id), array_agg(content_host), array_agg(content_url),
    array_agg(source_role), array_agg(org_id), array_agg(agent_id)
  ) FROM ${sql(relation)}`;
