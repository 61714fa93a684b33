import type { Sql } from "../../db/sql.ts";
import { eventCount } from "./measures.ts";
import type { Interval } from "./model.ts";
import { unionOfPieces } from "./pieces.ts";
import { type Level, levels } from "./plan.ts";
import { addTo, breakdownSource, byCountThenName, count, iso, plan, type Range, resolve } from "./read-context.ts";
import type { ReadScope } from "./scope.ts";
import { bucketOf, unionSessions } from "./sessions.ts";

/** Levels whose buckets nest inside each timeseries interval. */
const timeseriesLevels: Record<Interval, readonly Level[]> = {
  hour: [levels.hour],
  day: [levels.day, levels.hour],
  week: [levels.day, levels.hour],
  month: [levels.month, levels.day, levels.hour],
};

interface BucketRow {
  b: Date;
  event_type: string;
  n: string;
  sessions: string;
}

/** Events per bucket and type, and sessions per bucket (first event in scope); only non-empty buckets. */
export async function timeseries(sql: Sql, scope: ReadScope, range: Range, interval: Interval) {
  const resolved = await resolve(sql, scope);
  const order = timeseriesLevels[interval];
  const { family, filter } = breakdownSource(resolved, "events_by_domain_type");
  const pieces = plan(resolved, family, range, order);
  const counting = "union" in resolved.sessions ? undefined : resolved.sessions;
  const union = unionOfPieces(sql, family, pieces, (source, inRange) => {
    const sessions = counting ? source.measure(counting.total) : sql`0`;
    return sql`
      SELECT ${bucketOf(sql, interval, source.time)} AS b, event_type,
             ${source.measure(eventCount(sql))} AS n, ${sessions} AS sessions
      FROM ${source.table} WHERE ${filter(source)} AND ${inRange}
      ${source.groupBy(sql`b, event_type`)}`;
  });
  // Sent together on the read's one connection; PostgreSQL runs them in turn.
  const [eventRows, unionRows] = await Promise.all([
    sql<BucketRow[]>`
      SELECT b, event_type, sum(n) AS n, sum(sessions) AS sessions FROM (${union}) pieces GROUP BY b, event_type`,
    "union" in resolved.sessions ? unionSessions(sql, resolved.sessions.union, range, interval) : [],
  ]);

  const buckets = new Map<number, { total_events: number; sessions: number; types: Map<string, number> }>();
  const bucketAt = (at: Date) => {
    const key = new Date(at).getTime();
    let bucket = buckets.get(key);
    if (!bucket) {
      bucket = { total_events: 0, sessions: 0, types: new Map() };
      buckets.set(key, bucket);
    }
    return bucket;
  };
  for (const row of eventRows) {
    const bucket = bucketAt(row.b);
    bucket.total_events += count(row.n);
    bucket.sessions += count(row.sessions);
    addTo(bucket.types, row.event_type, count(row.n));
  }
  for (const row of unionRows) bucketAt(row.b as Date).sessions += count(row.n);

  return {
    interval,
    period_start: iso(range.since),
    period_end: range.until ? iso(range.until) : null,
    buckets: [...buckets]
      .sort(([a], [b]) => a - b)
      .map(([start, bucket]) => ({
        bucket_start: iso(new Date(start)),
        total_events: bucket.total_events,
        sessions: bucket.sessions,
        events_by_type: [...bucket.types]
          .map(([event_type, n]) => ({ event_type, count: n }))
          .sort(
            byCountThenName(
              (x) => x.count,
              (x) => x.event_type,
            ),
          ),
      })),
  };
}
