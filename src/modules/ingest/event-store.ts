import postgres from "postgres";
import type { Fragment, Queryable, Sql } from "../../db/sql.ts";
import {
  type EventRow,
  selectStoredColumns,
  storedColumnList,
  storedEventColumns,
  unnestEvents,
} from "./event-columns.ts";

/**
 * Writing events so that they are counted (sql/030). Each event carries the
 * scopes it is its session's first event in; deciding that needs every stored
 * event of its session, and no other write of the session in between. So a write
 * is one transaction of two statements, sent together (one round trip):
 *
 * 1. the sessions' bounds (`session_bounds`): the earliest event time of each
 *    session, moved earlier when needed. Upserting the rows locks them, in session
 *    order, until commit: a concurrent write of the same session waits here.
 * 2. the events: the session's stored events (found through the bound) and the new
 *    ones give every flag, new events are inserted with theirs, stored events whose
 *    flag a late event took over are updated, and the hosts and domain firsts for
 *    unions of owner domains are recorded. A second statement takes a new snapshot,
 *    so it sees the events a waited-for write committed.
 */

/** The statement that bounds and locks the rows' sessions (a CTE body or a statement of its own). */
export function boundSessions(sql: Queryable, rows: readonly EventRow[]): Fragment {
  const named = rows.filter((row) => row.sessionId !== null);
  const times = named.map((row) => storedEventColumns[0].of(row));
  return sql`
    INSERT INTO session_bounds AS b (session_id, events_from)
    SELECT session_id, min(event_time)
    FROM unnest(${named.map((row) => row.sessionId)}::uuid[], ${times}::timestamptz[]) AS n (session_id, event_time)
    GROUP BY session_id
    ORDER BY session_id
    ON CONFLICT (session_id) DO UPDATE SET events_from = EXCLUDED.events_from
      WHERE EXCLUDED.events_from < b.events_from`;
}

/**
 * Statement 2: inserts the rows not stored yet (a retried event is skipped) with
 * their flags, and moves flags a late event takes over. `agentOf` supplies an
 * event's agent from its session when the event names none (ingest). Returns the
 * number of events inserted.
 */
export async function storeEvents(
  sql: Queryable,
  rows: readonly EventRow[],
  options: { agentFromSession?: boolean } = {},
): Promise<number> {
  // Rows in key order, so that concurrent retries of the same events wait in one order.
  const sorted = [...rows].sort((a, b) => (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0));
  const agent = options.agentFromSession
    ? { agent_id: sql`coalesce(b.agent_id, s.agent_id)` }
    : { agent_id: sql`b.agent_id` };
  const sessionJoin = options.agentFromSession
    ? sql`LEFT JOIN sessions s ON s.id = b.session_id AND s.org_id = b.org_id`
    : sql``;
  const [row] = await sql<{ created: number }[]>`
    WITH batch AS (
      SELECT ${selectStoredColumns(sql, "b", agent)}
      FROM ${unnestEvents(sql, sorted, "b")} ${sessionJoin}
    ),
    named AS (SELECT DISTINCT session_id FROM batch WHERE session_id IS NOT NULL),
    stored AS (
      SELECT e.event_time, e.event_id, e.org_id, e.session_id, e.content_url, e.content_host, e.source_role,
             e.agent_id, e.first_in, e.first_domain, e.first_domain_role, e.first_domain_reporter
      FROM events e
      WHERE e.session_id IN (SELECT session_id FROM named)
        AND e.event_time >= (SELECT min(events_from) FROM session_bounds WHERE session_id IN (SELECT session_id FROM named))
    ),
    fresh AS (
      SELECT DISTINCT ON (b.org_id, b.event_id, b.event_time) b.*
      FROM batch b
      WHERE NOT EXISTS (
        SELECT 1 FROM stored x WHERE x.org_id = b.org_id AND x.event_id = b.event_id AND x.event_time = b.event_time
      )
      ORDER BY b.org_id, b.event_id, b.event_time
    ),
    pool AS (
      SELECT event_time, event_id, org_id, session_id, content_url, content_host, source_role, agent_id FROM stored
      UNION ALL
      SELECT event_time, event_id, org_id, session_id, content_url, content_host, source_role, agent_id
      FROM fresh WHERE session_id IS NOT NULL
    ),
    flags AS (
      SELECT f.*
      FROM (
        SELECT array_agg(event_time) AS t, array_agg(event_id) AS i, array_agg(org_id) AS o, array_agg(session_id) AS s,
               array_agg(content_url) AS u, array_agg(content_host) AS h, array_agg(source_role) AS r,
               array_agg(agent_id) AS a
        FROM pool
      ) AS p
      CROSS JOIN LATERAL session_first_flags(p.t, p.i, p.o, p.s, p.u, p.h, p.r, p.a) AS f
    ),
    inserted AS (
      INSERT INTO events (${storedColumnList(sql)}, first_in, first_domain, first_domain_role, first_domain_reporter)
      SELECT ${selectStoredColumns(sql, "n")},
             coalesce(f.first_in, 0), coalesce(f.first_domain, 0), coalesce(f.first_domain_role, 0),
             coalesce(f.first_domain_reporter, 0)
      FROM fresh n LEFT JOIN flags f USING (event_time, event_id, org_id)
      ON CONFLICT DO NOTHING
      RETURNING event_time, session_id, content_host, source_role, org_id, agent_id
    ),
    moved AS (
      UPDATE events e
      SET first_in = f.first_in, first_domain = f.first_domain, first_domain_role = f.first_domain_role,
          first_domain_reporter = f.first_domain_reporter
      FROM stored x JOIN flags f USING (event_time, event_id, org_id)
      WHERE (x.first_in, x.first_domain, x.first_domain_role, x.first_domain_reporter)
              IS DISTINCT FROM (f.first_in, f.first_domain, f.first_domain_role, f.first_domain_reporter)
        AND e.event_time = x.event_time AND e.event_id = x.event_id AND e.org_id = x.org_id
      RETURNING 1
    ),
    hosts AS (
      INSERT INTO content_hosts (host)
      SELECT DISTINCT content_host FROM inserted WHERE content_host IS NOT NULL ORDER BY content_host
      ON CONFLICT DO NOTHING
    ),
    domain_firsts AS (
      INSERT INTO session_domain_firsts AS d (domain, session_id, source_role, org_id, agent_id, first_seen)
      SELECT s.domain, i.session_id, i.source_role, i.org_id, coalesce(i.agent_id, ''), min(i.event_time)
      FROM inserted i CROSS JOIN LATERAL domain_suffixes(i.content_host) s
      WHERE i.session_id IS NOT NULL
      GROUP BY 1, 2, 3, 4, 5
      ORDER BY 1, 2, 3, 4, 5
      ON CONFLICT (domain, session_id, source_role, org_id, agent_id) DO UPDATE SET first_seen = EXCLUDED.first_seen
        WHERE EXCLUDED.first_seen < d.first_seen
    )
    SELECT (SELECT count(*)::int FROM inserted) AS created, (SELECT count(*) FROM moved) AS moved`;
  return row?.created ?? 0;
}

const deadlockDetected = "40P01";

/**
 * Runs `write` in a transaction, once more when PostgreSQL broke a deadlock by
 * aborting it: two writes that lock the same sessions in different statements
 * (a claim and a bound) can meet in the wrong order, and the retry then waits its turn.
 */
export async function inWriteTransaction<T>(sql: Sql, write: (tx: Queryable) => Promise<T>): Promise<T> {
  const attempt = () => sql.begin(write) as Promise<T>;
  try {
    return await attempt();
  } catch (error) {
    if (!(error instanceof postgres.PostgresError && error.code === deadlockDetected)) throw error;
    return attempt();
  }
}

/**
 * Stores events counted, for writers other than ingest (bulk loads, fixtures): the
 * two statements of one write, in one transaction. Returns the events inserted.
 */
export function writeEvents(sql: Sql, rows: readonly EventRow[]): Promise<number> {
  if (rows.length === 0) return Promise.resolve(0);
  return inWriteTransaction(sql, async (tx) => {
    // Sent now, before the events' statement (queries are otherwise sent when awaited).
    const bounded = boundSessions(tx, rows).execute();
    const [, created] = await Promise.all([bounded, storeEvents(tx, rows)]);
    return created;
  });
}
