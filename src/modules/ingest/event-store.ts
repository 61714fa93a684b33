import postgres from "postgres";
import type { Fragment, Queryable, Sql } from "../../db/sql.ts";
import { type EventRow, selectStoredColumns, storedColumnList, unnestEvents } from "./event-columns.ts";
import { domainSuffixes, eventKey, type Flags, noFlags, type PoolEvent, sessionFirstFlags } from "./first-flags.ts";

/**
 * Writing events so that they are counted (sql/030, first-flags.ts). Deciding an
 * event's flags needs every stored event of its session, and no other write of the
 * session in between. So a write is one transaction:
 *
 * 1. the sessions' bounds (`session_bounds`): the earliest event time of each
 *    session, moved earlier when needed. Upserting the rows locks them, in session
 *    order, until commit: a concurrent write of the same session waits here.
 * 2. the stored events of those sessions, found through the bound. Sent with the
 *    first statement (one round trip), it runs after it with a snapshot of its
 *    own, so it sees what a waited-for write committed.
 * 3. the flags, computed here; then one statement inserts the new events with
 *    theirs, updates stored events whose flag a late event took over, and records
 *    new hosts and the domain firsts that unions of owner domains count from.
 */

/** The statement that bounds and locks the rows' sessions (a CTE body, or a statement of its own). */
export function boundSessions(sql: Queryable, rows: readonly EventRow[]): Fragment {
  const named = rows.filter((row) => row.sessionId !== null);
  return sql`
    INSERT INTO session_bounds AS b (session_id, events_from)
    SELECT session_id, min(event_time)
    FROM unnest(
      ${named.map((row) => row.sessionId)}::uuid[],
      ${named.map((row) => isoTime(row.eventTime))}::timestamptz[]
    ) AS n (session_id, event_time)
    GROUP BY session_id
    ORDER BY session_id
    ON CONFLICT (session_id) DO UPDATE SET events_from = EXCLUDED.events_from
      WHERE EXCLUDED.events_from < b.events_from`;
}

const isoTime = (time: Date | string) => (typeof time === "string" ? time : time.toISOString());

/** Epoch microseconds of a time given as a Date or as ISO 8601 text (rounded to microseconds, as PostgreSQL does). */
export function microseconds(time: Date | string): number {
  if (typeof time !== "string") return time.getTime() * 1000;
  const fraction = /\.(\d+)/.exec(time)?.[1] ?? "";
  const whole = Date.parse(time.replace(/\.\d+/, ""));
  const digits = `${fraction}0000000`;
  return whole * 1000 + Math.round(Number(`${digits.slice(0, 6)}.${digits.slice(6, 7)}`));
}

export interface StoredRow {
  time_us: string;
  event_id: string;
  org_id: string;
  session_id: string;
  content_url: string | null;
  content_host: string | null;
  source_role: string;
  agent_id: string | null;
  first_in: number;
  first_domain: number;
  first_domain_role: number;
  first_domain_reporter: number;
}

/** The session ids the rows name. */
export const sessionsOf = (rows: readonly EventRow[]) => [
  ...new Set(rows.flatMap((row) => (row.sessionId ? [row.sessionId.toLowerCase()] : []))),
];

/**
 * The stored events of these sessions, from their bound on. Sent after the bounds
 * statement of the transaction, it sees what a write it waited for committed.
 */
export function storedEventsOf(sql: Queryable, sessionIds: readonly string[]): Promise<StoredRow[]> {
  if (sessionIds.length === 0) return Promise.resolve([]);
  return sql<StoredRow[]>`
    SELECT (extract(epoch FROM event_time) * 1000000)::bigint AS time_us, event_id, org_id, session_id, content_url,
           content_host, source_role, agent_id, first_in, first_domain, first_domain_role, first_domain_reporter
    FROM events
    WHERE session_id = ANY (${sessionIds}::uuid[])
      AND event_time >= (SELECT min(events_from) FROM session_bounds WHERE session_id = ANY (${sessionIds}::uuid[]))`.execute();
}

const poolEventOf = (row: StoredRow): PoolEvent => ({
  timeUs: Number(row.time_us),
  eventId: row.event_id,
  orgId: row.org_id,
  sessionId: row.session_id,
  contentUrl: row.content_url,
  contentHost: row.content_host,
  sourceRole: row.source_role,
  agentId: row.agent_id,
});

const sameFlags = (a: Flags, row: StoredRow) =>
  a.firstIn === row.first_in &&
  a.firstDomain === row.first_domain &&
  a.firstDomainRole === row.first_domain_role &&
  a.firstDomainReporter === row.first_domain_reporter;

/** One row per session, domain, role and reporter: the earliest time among `events` (session_domain_firsts). */
function domainFirstsOf(events: readonly PoolEvent[]) {
  const earliest = new Map<string, { domain: string; event: PoolEvent; timeUs: number }>();
  for (const event of events) {
    for (const { domain } of domainSuffixes(event.contentHost)) {
      const key = `${domain}|${event.sessionId}|${event.sourceRole}|${event.orgId}|${event.agentId ?? ""}`;
      const known = earliest.get(key);
      if (!known || event.timeUs < known.timeUs) earliest.set(key, { domain, event, timeUs: event.timeUs });
    }
  }
  return [...earliest.values()].sort((a, b) =>
    a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : a.event.sessionId < b.event.sessionId ? -1 : 1,
  );
}

/** The time `column` microseconds after the epoch, exactly (a double holds every microsecond up to year 2255). */
const fromMicroseconds = (sql: Queryable, column: string) =>
  sql`timestamptz 'epoch' + ${sql(column)} * interval '1 microsecond'`;

/**
 * Writes `rows` counted, given the `stored` events of their sessions: those
 * already stored (a retry) are skipped, the others inserted with their flags;
 * flags a late event takes over are moved; new hosts and domain firsts are
 * recorded. Runs inside the caller's transaction, after the bounds of the rows'
 * sessions. Returns the events inserted.
 */
export async function storeCounted(
  sql: Queryable,
  rows: readonly EventRow[],
  stored: readonly StoredRow[],
  options: { recount?: boolean } = {},
): Promise<number> {
  const storedKeys = new Set(stored.map((row) => eventKey(poolEventOf(row))));
  const fresh: { row: EventRow; event: PoolEvent | null }[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    const event: PoolEvent = {
      timeUs: microseconds(row.eventTime),
      eventId: row.eventId.toLowerCase(),
      orgId: row.orgId,
      sessionId: row.sessionId?.toLowerCase() ?? "",
      contentUrl: row.contentUrl,
      contentHost: row.contentHost,
      sourceRole: row.sourceRole,
      agentId: row.agentId,
    };
    const key = eventKey(event);
    if (storedKeys.has(key) || seen.has(key)) continue;
    seen.add(key);
    fresh.push({ row, event: row.sessionId ? event : null });
  }
  const freshEvents = fresh.flatMap((item) => (item.event ? [item.event] : []));
  const flags = sessionFirstFlags([...stored.map(poolEventOf), ...freshEvents]);
  const freshFlags = fresh.map((item) => (item.event ? (flags.get(eventKey(item.event)) ?? noFlags) : noFlags));
  const moved = stored.filter((row) => !sameFlags(flags.get(eventKey(poolEventOf(row))) ?? noFlags, row));
  const movedFlags = moved.map((row) => flags.get(eventKey(poolEventOf(row))) ?? noFlags);
  // A recount rebuilds the domain firsts of everything stored; a write adds its new events'.
  const domainFirsts = domainFirstsOf(options.recount ? stored.map(poolEventOf) : freshEvents);
  const hosts = [...new Set(fresh.flatMap((item) => (item.row.contentHost ? [item.row.contentHost] : [])))].sort();
  const freshRows = fresh.map((item) => item.row);

  const [result] = await sql<{ created: number }[]>`
    WITH inserted AS (
      INSERT INTO events (${storedColumnList(sql)}, first_in, first_domain, first_domain_role, first_domain_reporter)
      SELECT ${selectStoredColumns(sql, "n")}, n.first_in, n.first_domain, n.first_domain_role, n.first_domain_reporter
      FROM ${unnestEvents(sql, freshRows, "n", [
        { name: "first_in", arrayType: "smallint", values: freshFlags.map((f) => f.firstIn) },
        { name: "first_domain", arrayType: "smallint", values: freshFlags.map((f) => f.firstDomain) },
        { name: "first_domain_role", arrayType: "smallint", values: freshFlags.map((f) => f.firstDomainRole) },
        { name: "first_domain_reporter", arrayType: "smallint", values: freshFlags.map((f) => f.firstDomainReporter) },
      ])}
      ON CONFLICT DO NOTHING
      RETURNING 1
    )
    ${
      moved.length > 0
        ? sql`, moved AS (
      UPDATE events e
      SET first_in = m.first_in, first_domain = m.first_domain, first_domain_role = m.first_domain_role,
          first_domain_reporter = m.first_domain_reporter
      FROM (
        SELECT ${fromMicroseconds(sql, "time_us")} AS event_time, *
        FROM unnest(
          ${moved.map((row) => Number(row.time_us))}::bigint[],
          ${moved.map((row) => row.event_id)}::uuid[],
          ${moved.map((row) => row.org_id)}::uuid[],
          ${moved.map((row) => row.session_id)}::uuid[],
          ${movedFlags.map((f) => f.firstIn)}::smallint[],
          ${movedFlags.map((f) => f.firstDomain)}::smallint[],
          ${movedFlags.map((f) => f.firstDomainRole)}::smallint[],
          ${movedFlags.map((f) => f.firstDomainReporter)}::smallint[]
        ) AS m (time_us, event_id, org_id, session_id, first_in, first_domain, first_domain_role, first_domain_reporter)
      ) AS m
      WHERE e.session_id = m.session_id AND e.event_time = m.event_time AND e.event_id = m.event_id
        AND e.org_id = m.org_id
    )`
        : sql``
    }
    ${
      hosts.length > 0
        ? sql`, hosts AS (
      INSERT INTO content_hosts (host) SELECT unnest(${hosts}::text[]) ON CONFLICT DO NOTHING
    )`
        : sql``
    }
    ${
      domainFirsts.length > 0
        ? sql`, domain_firsts AS (
      INSERT INTO session_domain_firsts AS d (domain, session_id, source_role, org_id, agent_id, first_seen)
      SELECT domain, session_id, source_role, org_id, agent_id, ${fromMicroseconds(sql, "time_us")}
      FROM unnest(
        ${domainFirsts.map((first) => first.timeUs)}::bigint[],
        ${domainFirsts.map((first) => first.domain)}::text[],
        ${domainFirsts.map((first) => first.event.sessionId)}::uuid[],
        ${domainFirsts.map((first) => first.event.sourceRole)}::text[],
        ${domainFirsts.map((first) => first.event.orgId)}::uuid[],
        ${domainFirsts.map((first) => first.event.agentId ?? "")}::text[]
      ) AS f (time_us, domain, session_id, source_role, org_id, agent_id)
      ON CONFLICT (domain, session_id, source_role, org_id, agent_id) DO UPDATE SET first_seen = EXCLUDED.first_seen
        WHERE EXCLUDED.first_seen < d.first_seen
    )`
        : sql``
    }
    SELECT count(*)::int AS created FROM inserted`;
  return result?.created ?? 0;
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
 * bounds, then the events, in one transaction. Returns the events inserted.
 */
export function writeEvents(sql: Sql, rows: readonly EventRow[]): Promise<number> {
  if (rows.length === 0) return Promise.resolve(0);
  return inWriteTransaction(sql, async (tx) => {
    // Sent now, before the next statement (queries are otherwise sent when awaited).
    const bounded = boundSessions(tx, rows).execute();
    const [, stored] = await Promise.all([bounded, storedEventsOf(tx, sessionsOf(rows))]);
    return storeCounted(tx, rows, stored);
  });
}

/**
 * Gives sessions queued in `session_recounts` their flags, bounds and domain firsts
 * from their stored events (events stored before sql/030, or repaired), a few
 * hundred sessions per transaction. Returns the sessions recounted.
 */
export async function recountSessions(sql: Sql): Promise<number> {
  let recounted = 0;
  for (;;) {
    const done = await inWriteTransaction(sql, async (tx) => {
      const queued = await tx<{ session_id: string }[]>`
        DELETE FROM session_recounts
        WHERE session_id IN (SELECT session_id FROM session_recounts ORDER BY session_id LIMIT 500 FOR UPDATE SKIP LOCKED)
        RETURNING session_id`;
      if (queued.length === 0) return 0;
      const ids = queued.map((row) => row.session_id).sort();
      await tx`
        INSERT INTO session_bounds AS b (session_id, events_from)
        SELECT session_id, min(event_time) FROM events WHERE session_id = ANY (${ids}::uuid[])
        GROUP BY session_id ORDER BY session_id
        ON CONFLICT (session_id) DO UPDATE SET events_from = EXCLUDED.events_from`;
      const stored = await storedEventsOf(tx, ids);
      // Every stored event is new to the domain firsts: insert them as if fresh.
      await tx`DELETE FROM session_domain_firsts WHERE session_id = ANY (${ids}::uuid[])`;
      await storeCounted(tx, [], stored, { recount: true });
      return ids.length;
    });
    if (done === 0) return recounted;
    recounted += done;
  }
}
