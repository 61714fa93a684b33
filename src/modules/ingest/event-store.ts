import type { DatabaseKind, Fragment, Queryable, Sql } from "../../db/sql.ts";
import { type EventRow, selectStoredColumns, storedColumnList, unnestEvents } from "./event-columns.ts";
import { isoTime, microseconds } from "./event-times.ts";
import {
  type CountedEvent,
  type Flags,
  type HeldEvent,
  noFlags,
  ScopeKeys,
  sameFlags,
  takeFirsts,
  urlScopeBits,
} from "./first-flags.ts";
import { firstOfEachEvent, inWriteTransaction, LastStatement, RowsToWrite } from "./write-transaction.ts";

/**
 * Writing events so that they are counted (sql/030, first-flags.ts). Deciding an
 * event's flags needs the stored events of its session that hold the flags it
 * could take, and no other write of the session in between. So a write is one
 * transaction:
 *
 * 1. the sessions' bounds (`session_bounds`): the earliest event time of each
 *    session, moved earlier when needed. Upserting the rows locks them, in session
 *    order, until commit: a concurrent write of the same session waits here. The
 *    statement returns the earliest of the bounds as they stand locked.
 * 2. those flag holders of the sessions, from that time on. The time is sent as a
 *    value, not read by a sub-select, so that the planner leaves out every chunk
 *    before it: planning the read for all of a year's chunks cost about 8 ms a
 *    write. A statement of its own, it sees what a waited-for write committed.
 *    It goes out before the bounds answer, from a time that covers nearly every
 *    session (readHoldersAhead), and again from the bound when that did not.
 * 3. the flags, computed here; then one statement inserts the new events with
 *    theirs, updates stored events whose flag a late event took over, and records
 *    new hosts and the domain firsts that unions of owner domains count from.
 *
 * Two round trips, mostly: BEGIN goes out with the first statement
 * (patches/README.md), the holder read right behind it, and COMMIT with the last
 * (LastStatement).
 */

/**
 * The statement that bounds and locks the rows' sessions, a CTE body returning
 * each session's bound (`events_from`) as it stands locked: every row is updated,
 * so that a bound a waited-for write moved is returned too. Rows hold session
 * ids; or, inside the statement that claims their sessions, `claimed` (a
 * relation of org_id, name and id) turns the names of rows that name their
 * session (not through a click token) into ids.
 *
 * The statement gets one row per session and organisation with its earliest
 * event, not one per event: unnesting and grouping a time per event cost about
 * 1.2 µs of the database's CPU and 0.9 µs of the service's an event (500 events
 * of five sessions a statement).
 */
export function boundSessions(sql: Queryable, starts: readonly SessionStart[], claimed?: Fragment): Fragment {
  const earliest = starts.map(({ row }) => row);
  const id = claimed ? sql`coalesce(c.id, n.session_id)` : sql`n.session_id`;
  return sql`
    INSERT INTO session_bounds AS b (session_id, events_from)
    SELECT ${id}, min(n.event_time)
    FROM unnest(
      ${earliest.map((row) => row.sessionId)}::uuid[],
      ${earliest.map((row) => isoTime(row.eventTime))}::timestamptz[],
      ${earliest.map((row) => row.orgId)}::uuid[],
      ${earliest.map((row) => (row.sessionFromToken ? null : row.sessionId))}::uuid[]
    ) AS n (session_id, event_time, org_id, name)
    ${claimed ? sql`LEFT JOIN ${claimed} c ON c.org_id = n.org_id AND c.name = n.name` : sql``}
    GROUP BY 1
    ORDER BY 1
    ON CONFLICT (session_id) DO UPDATE SET events_from = least(b.events_from, EXCLUDED.events_from)
    RETURNING b.events_from`;
}

/** A session's earliest row among a write's, with its time in microseconds. */
export interface SessionStart {
  row: EventRow;
  timeUs: number;
}

/**
 * The earliest row of each session the rows name, per organisation and per way
 * of naming it (a name, or an id from a click token): what boundSessions and
 * readHoldersAhead need. Sessions merge in SQL where a name and an id turn out to
 * be one session.
 */
export function sessionStarts(rows: readonly EventRow[]): SessionStart[] {
  const earliest = new Map<string, SessionStart>();
  for (const row of rows) {
    if (row.sessionId === null) continue;
    const key = `${row.orgId}/${row.sessionFromToken ? "id" : "name"}/${row.sessionId.toLowerCase()}`;
    const timeUs = microseconds(row.eventTime);
    const known = earliest.get(key);
    if (!known || timeUs < known.timeUs) earliest.set(key, { row, timeUs });
  }
  return [...earliest.values()];
}

/**
 * The earliest bound of the sessions a `bounds` CTE (boundSessions) locked, in
 * microseconds since the epoch (as text: a bigint); null without sessions.
 */
export const earliestBound = (sql: Queryable) =>
  sql`(SELECT (extract(epoch FROM min(events_from)) * 1000000)::bigint FROM bounds)`;

interface StoredRow {
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
  chunk: string;
}

/** A stored event holding flags, with the chunk of `events` that stores it. */
export interface StoredHolder extends HeldEvent {
  chunk: string;
}

/**
 * Which table a write's UPDATE of moved flags names. PostgreSQL plans an UPDATE
 * of the hypertable over every chunk, whatever its conditions on time: with a
 * year of weekly chunks the write's statement took 3.1 ms on average to plan
 * against 0.4 ms with one (docs/benchmarks.md). So on a server each moved event
 * is updated through its own chunk, which TimescaleDB 2.28 updates compressed or
 * not. The embedded engine's TimescaleDB leaves a chunk's compressed rows as they
 * were when the chunk itself is updated, so there the hypertable is: correct on
 * both, and the default.
 */
export type FlagUpdates = "chunks" | "hypertable";

export const flagUpdatesOn = (kind: DatabaseKind): FlagUpdates => (kind === "server" ? "chunks" : "hypertable");

/** The session ids the rows name. */
export const sessionsOf = (rows: readonly EventRow[]) => [
  ...new Set(rows.flatMap((row) => (row.sessionId ? [row.sessionId.toLowerCase()] : []))),
];

/**
 * Stored events of these sessions from `from` (their earliest bound, as the
 * bounds statement returned it) on: those holding a flag that events on `urls`
 * could take (first-flags.ts), or, for a recount, all of them. Sent after the
 * bounds statement of the transaction, it sees what a write it waited for committed.
 * The URLs go in as a subquery, not as an array constant: for a constant,
 * PostgreSQL estimates each URL against the column's most common values (read
 * out of the compressed statistics once per URL) in every analysed chunk it
 * plans: for 309 URLs, 1.6 to 1.9 ms of planning on one chunk and 28 to 33 ms on
 * 11, against 0.6 to 0.7 and about 1 with the subquery, which takes a fixed
 * estimate and is hashed once per chunk scanned.
 */
export async function storedEventsOf(
  sql: Queryable,
  sessionIds: readonly string[],
  from: string | null,
  which: { flagsTakenBy: readonly (string | null)[] } | "all",
): Promise<StoredHolder[]> {
  if (sessionIds.length === 0 || from === null) return [];
  const holders =
    which === "all"
      ? sql``
      : sql`AND ((first_in & ${~urlScopeBits}) <> 0 OR first_domain <> 0 OR first_domain_role <> 0
                OR first_domain_reporter <> 0
                OR ((first_in & ${urlScopeBits}) <> 0
                    AND content_url IN (SELECT unnest(${[...new Set(which.flagsTakenBy.filter((url) => url !== null))]}::text[]))))`;
  const rows = await sql<StoredRow[]>`
    SELECT (extract(epoch FROM event_time) * 1000000)::bigint AS time_us, event_id, org_id, session_id, content_url,
           content_host, source_role, agent_id, first_in, first_domain, first_domain_role, first_domain_reporter,
           tableoid::regclass::text AS chunk
    FROM events
    WHERE session_id = ANY (${sessionIds}::uuid[]) AND event_time >= ${from}::timestamptz
      ${holders}`.execute();
  return rows.map((row) => ({
    timeUs: Number(row.time_us),
    eventId: row.event_id,
    orgId: row.org_id,
    sessionId: row.session_id,
    contentUrl: row.content_url,
    contentHost: row.content_host,
    sourceRole: row.source_role,
    agentId: row.agent_id,
    flags: {
      firstIn: row.first_in,
      firstDomain: row.first_domain,
      firstDomainRole: row.first_domain_role,
      firstDomainReporter: row.first_domain_reporter,
    },
    chunk: row.chunk,
  }));
}

const flagsTakenBy = (rows: readonly EventRow[]) => ({ flagsTakenBy: rows.map((row) => row.contentUrl) });

/**
 * A bound as earliestBound returns it (µs), as the ISO 8601 text storedEventsOf
 * takes, rounded down to its millisecond: read from there, nothing is missed.
 */
const boundText = (boundUs: string | number | null) =>
  boundUs === null ? null : new Date(Math.floor(Number(boundUs) / 1000)).toISOString();

/**
 * How long before a write's earliest event its sessions' flag holders are first
 * looked for (readHoldersAhead). An agent's session lasts minutes to hours, and
 * events come at most hours late; a session that began earlier costs its write the
 * round trip the early read saves. Wider, the read would only plan a chunk more.
 */
const holdersAheadUs = 24 * 3600 * 1_000_000;

/** A read of flag holders sent before the bounds of its sessions were known. */
export interface HoldersAhead {
  sessionIds: readonly string[];
  fromUs: number;
  held: Promise<StoredHolder[]>;
}

/**
 * Sends the read of the flag holders of the rows' sessions (storedEventsOf) before
 * the sessions' bounds are known, so that it shares the round trip of the
 * statement that takes them: from a day (holdersAheadUs) before the earliest of
 * the sessions' starts (sessionStarts), for the session ids the rows name. PostgreSQL runs it after that
 * statement has locked the sessions, so it sees what a write it waited for
 * committed. holdersOf then tells whether it covered the sessions as bounded.
 */
export function readHoldersAhead(
  sql: Queryable,
  rows: readonly EventRow[],
  starts: readonly SessionStart[],
): HoldersAhead {
  let earliest = Number.POSITIVE_INFINITY;
  for (const { timeUs } of starts) earliest = Math.min(earliest, timeUs);
  const sessionIds = sessionsOf(rows);
  const fromUs = earliest - holdersAheadUs;
  const held = storedEventsOf(sql, sessionIds, boundText(sessionIds.length > 0 ? fromUs : null), flagsTakenBy(rows));
  // Read by holdersOf; when the statement before it fails, this one fails behind it, unread.
  held.catch(() => {});
  return { sessionIds, fromUs, held };
}

/**
 * The flag holders of the rows' sessions, given the earliest bound the bounds
 * statement returned (µs): the read sent ahead when it covered the same sessions
 * from that bound on; otherwise (a session that began before its window, or a
 * name that a claim turned into another id) a read from the bound.
 */
export async function holdersOf(
  sql: Queryable,
  ahead: HoldersAhead,
  rows: readonly EventRow[],
  boundUs: string | null,
): Promise<StoredHolder[]> {
  const sessionIds = sessionsOf(rows);
  const aheadIds = new Set(ahead.sessionIds);
  const covered =
    Number(boundUs) >= ahead.fromUs &&
    sessionIds.length === aheadIds.size &&
    sessionIds.every((id) => aheadIds.has(id));
  if (covered || sessionIds.length === 0) return ahead.held;
  await ahead.held;
  return storedEventsOf(sql, sessionIds, boundText(boundUs), flagsTakenBy(rows));
}

/** One row per session, domain, role and reporter: the earliest time among `events` (session_domain_firsts). */
function domainFirstsOf(events: readonly CountedEvent[]) {
  const keys = new ScopeKeys();
  const earliest = new Map<number, { domain: string; event: CountedEvent }>();
  for (const event of events) {
    const reporterAgent = keys.pair(keys.of(event.orgId), keys.of(event.agentId ?? ""));
    const within = keys.pair(keys.of(event.sessionId), keys.pair(keys.of(event.sourceRole), reporterAgent));
    for (const { domain, id } of keys.domainsOf(event.contentHost)) {
      // This map holds domain firsts alone, so their keys need no kind of their own.
      const key = ScopeKeys.key(0, id, within);
      const known = earliest.get(key);
      if (!known || event.timeUs < known.event.timeUs) earliest.set(key, { domain, event });
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
 * `e.event_time` from the earliest of these times (µs) on, as a value the planner
 * sees, so that an update of a few stored events plans and opens only the chunks
 * from there on, not every chunk of the hypertable (milliseconds a write with a
 * year stored). Widened to a whole millisecond; the join on each event's time is
 * exact.
 *
 * A lower bound only: with both bounds, a chunk whose statistics were missing or
 * stale (young, or grown since autovacuum last analysed it) made the planner
 * judge the span nearly empty and join by scanning all of it, about 200 ms a
 * write on a chunk of 200,000 events in the benchmark's hour, against 8 to 10 ms
 * looking each moved event up through an index, which it chooses once the span
 * has no end (test/ingest/flag-moves-plan.test.ts).
 */
function fromEarliestOf(sql: Queryable, timesUs: readonly number[]): Fragment {
  // A loop, not Math.min(...times): a recount moves more events than a call takes arguments.
  let earliest = Number.POSITIVE_INFINITY;
  for (const time of timesUs) earliest = Math.min(earliest, time);
  return sql`e.event_time >= ${new Date(Math.floor(earliest / 1000)).toISOString()}::timestamptz`;
}

/** The moves grouped by the table that updates them (FlagUpdates). */
function movesByTable(moves: readonly Move[], flagUpdates: FlagUpdates): Move[][] {
  if (flagUpdates === "hypertable") return [[...moves]];
  return [...Map.groupBy(moves, (move) => move.event.chunk).values()];
}

/**
 * A CTE `name` that gives stored events their new flags, all through one table:
 * their chunk, or `events` (FlagUpdates).
 */
function moveFlags(sql: Queryable, name: string, moves: readonly Move[], flagUpdates: FlagUpdates): Fragment {
  const table = flagUpdates === "chunks" ? (moves[0] as Move).event.chunk : "events";
  return sql`, ${sql(name)} AS (
      UPDATE ${sql(table)} e
      SET first_in = m.first_in, first_domain = m.first_domain, first_domain_role = m.first_domain_role,
          first_domain_reporter = m.first_domain_reporter
      FROM (
        SELECT ${fromMicroseconds(sql, "time_us")} AS event_time, *
        FROM unnest(
          ${moves.map(({ event }) => event.timeUs)}::bigint[],
          ${moves.map(({ event }) => event.eventId)}::uuid[],
          ${moves.map(({ event }) => event.orgId)}::uuid[],
          ${moves.map(({ event }) => event.sessionId)}::uuid[],
          ${moves.map(({ flags }) => flags.firstIn)}::smallint[],
          ${moves.map(({ flags }) => flags.firstDomain)}::smallint[],
          ${moves.map(({ flags }) => flags.firstDomainRole)}::smallint[],
          ${moves.map(({ flags }) => flags.firstDomainReporter)}::smallint[]
        ) AS m (time_us, event_id, org_id, session_id, first_in, first_domain, first_domain_role, first_domain_reporter)
      ) AS m
      WHERE e.session_id = m.session_id AND e.event_time = m.event_time AND e.event_id = m.event_id
        AND e.org_id = m.org_id AND ${fromEarliestOf(
          sql,
          moves.map(({ event }) => event.timeUs),
        )}
    )`;
}

interface Move {
  event: StoredHolder;
  flags: Flags;
}

/** What one counted write stores: new events with their flags, flags moved, hosts and domain firsts. */
interface CountedWrite {
  inserts: readonly EventRow[];
  insertFlags: readonly Flags[];
  moves: readonly Move[];
  domainFirsts: ReturnType<typeof domainFirstsOf>;
  hosts: readonly string[];
}

/**
 * Writes `rows` counted, given the stored events `held` that hold the flags they
 * could take (storedEventsOf): each new event is inserted with its flags, flags a
 * late event takes over are moved, new hosts and domain firsts are recorded. An
 * event already stored fails the write (RowsToWrite leaves them out of a retry).
 * Runs inside the caller's transaction, after the bounds of the rows' sessions,
 * as its last statement: the answer says, for each row, whether this write
 * inserted it (not a repeat of an earlier row).
 */
export function storeCounted(
  sql: Queryable,
  rows: readonly EventRow[],
  held: readonly StoredHolder[],
  flagUpdates: FlagUpdates,
): LastStatement<boolean[]> {
  const inserts: EventRow[] = [];
  const arriving: CountedEvent[] = [];
  const isFirst = firstOfEachEvent(rows);
  rows.forEach((row, i) => {
    if (!isFirst[i]) return;
    const event: CountedEvent = {
      timeUs: microseconds(row.eventTime),
      eventId: row.eventId.toLowerCase(),
      orgId: row.orgId,
      sessionId: row.sessionId?.toLowerCase() ?? "",
      contentUrl: row.contentUrl,
      contentHost: row.contentHost,
      sourceRole: row.sourceRole,
      agentId: row.agentId,
    };
    inserts.push(row);
    arriving.push(event);
  });
  // Events outside any session are first in nothing.
  const inSessions = arriving.flatMap((event, i) => (event.sessionId === "" ? [] : [i]));
  const { arrivingFlags, changed } = takeFirsts(
    held,
    inSessions.map((i) => arriving[i] as CountedEvent),
  );
  const insertFlags: Flags[] = arriving.map(() => noFlags);
  inSessions.forEach((i, j) => {
    insertFlags[i] = arrivingFlags[j] as Flags;
  });
  const written = applyWrite(
    sql,
    {
      inserts,
      insertFlags,
      moves: changed,
      domainFirsts: domainFirstsOf(inSessions.map((i) => arriving[i] as CountedEvent)),
      hosts: [...new Set(inserts.flatMap((row) => (row.contentHost ? [row.contentHost] : [])))].sort(),
    },
    flagUpdates,
  );
  return new LastStatement(written.then(() => isFirst));
}

/** One statement for a counted write: it inserts every event or fails. */
function applyWrite(sql: Queryable, write: CountedWrite, flagUpdates: FlagUpdates): Promise<void> {
  const { inserts, insertFlags, moves, domainFirsts, hosts } = write;
  const statement = sql`
    WITH inserted AS (
      INSERT INTO events (${storedColumnList(sql)}, first_in, first_domain, first_domain_role, first_domain_reporter)
      SELECT ${selectStoredColumns(sql, "n")}, n.first_in, n.first_domain, n.first_domain_role, n.first_domain_reporter
      FROM ${unnestEvents(sql, inserts, "n", [
        { name: "first_in", arrayType: "smallint", values: insertFlags.map((f) => f.firstIn) },
        { name: "first_domain", arrayType: "smallint", values: insertFlags.map((f) => f.firstDomain) },
        { name: "first_domain_role", arrayType: "smallint", values: insertFlags.map((f) => f.firstDomainRole) },
        { name: "first_domain_reporter", arrayType: "smallint", values: insertFlags.map((f) => f.firstDomainReporter) },
      ])}
    )
    ${
      // An empty list would be sent as a parameter: no moves, no CTE.
      moves.length > 0
        ? movesByTable(moves, flagUpdates).map((tableMoves, i) => moveFlags(sql, `moved_${i}`, tableMoves, flagUpdates))
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
        ${domainFirsts.map((first) => first.event.timeUs)}::bigint[],
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
    SELECT NULL`;
  // Sent now, so that a caller may end the transaction before the answer comes;
  // built before, so that rows that cannot be sent throw here, before any COMMIT.
  return statement.execute().then(() => undefined);
}

/**
 * Stores events counted, for writers other than ingest (bulk loads, fixtures): the
 * bounds, then the events, in one transaction. Returns the events inserted.
 */
export async function writeEvents(
  sql: Sql,
  rows: readonly EventRow[],
  flagUpdates: FlagUpdates = "hypertable",
): Promise<number> {
  if (rows.length === 0) return 0;
  const inserted = await inWriteTransaction(sql, async (tx, stored) => {
    const writing = await RowsToWrite.of(tx, rows, stored);
    if (writing.rows.length === 0) return writing.noneInserted();
    const starts = sessionStarts(writing.rows);
    const bounded = tx<{ held_from: string | null }[]>`
      WITH bounds AS (${boundSessions(tx, starts)}) SELECT ${earliestBound(tx)} AS held_from`.execute();
    const ahead = readHoldersAhead(tx, writing.rows, starts);
    const [bound] = await bounded;
    const held = await holdersOf(tx, ahead, writing.rows, bound?.held_from ?? null);
    return writing.insertedOf(storeCounted(tx, writing.rows, held, flagUpdates));
  });
  return inserted.filter(Boolean).length;
}

/**
 * Gives sessions queued in `session_recounts` their flags, bounds and domain firsts
 * from their stored events (events stored before sql/030, or repaired), a few
 * hundred sessions per transaction. Returns the sessions recounted.
 */
export async function recountSessions(sql: Sql, flagUpdates: FlagUpdates = "hypertable"): Promise<number> {
  let recounted = 0;
  for (;;) {
    const done = await inWriteTransaction(sql, async (tx) => {
      const queued = await tx<{ session_id: string }[]>`
        DELETE FROM session_recounts
        WHERE session_id IN (SELECT session_id FROM session_recounts ORDER BY session_id LIMIT 500 FOR UPDATE SKIP LOCKED)
        RETURNING session_id`;
      if (queued.length === 0) return 0;
      const ids = queued.map((row) => row.session_id).sort();
      const [bounded] = await tx<{ held_from: string | null }[]>`
        WITH bounds AS (
          INSERT INTO session_bounds AS b (session_id, events_from)
          SELECT session_id, min(event_time) FROM events WHERE session_id = ANY (${ids}::uuid[])
          GROUP BY session_id ORDER BY session_id
          ON CONFLICT (session_id) DO UPDATE SET events_from = EXCLUDED.events_from
          RETURNING b.events_from
        )
        SELECT ${earliestBound(tx)} AS held_from`;
      const stored = await storedEventsOf(tx, ids, boundText(bounded?.held_from ?? null), "all");
      await tx`DELETE FROM session_domain_firsts WHERE session_id = ANY (${ids}::uuid[])`;
      // Flags from scratch: every stored event as if it arrived, none holding any.
      const { arrivingFlags } = takeFirsts([], stored);
      await applyWrite(
        tx,
        {
          inserts: [],
          insertFlags: [],
          moves: stored.flatMap((event, i) => {
            const flags = arrivingFlags[i] as Flags;
            return sameFlags(flags, event.flags) ? [] : [{ event, flags }];
          }),
          domainFirsts: domainFirstsOf(stored),
          hosts: [],
        },
        flagUpdates,
      );
      return ids.length;
    });
    if (done === 0) return recounted;
    recounted += done;
  }
}
