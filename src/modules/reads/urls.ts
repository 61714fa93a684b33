import type { ReadCompanion } from "../../db/read-companion.ts";
import type { Fragment, Sql } from "../../db/sql.ts";
import { eventCount } from "./measures.ts";
import { unionOfPieces } from "./pieces.ts";
import { allLevels, count, iso, onHosts, plan, type Range, resolve } from "./read-context.ts";
import type { RollupFamily } from "./rollups.ts";
import type { ReadScope } from "./scope.ts";

interface PageRow {
  total: string;
  content_url: string | null;
  n: string | null;
}

interface RankedPage {
  /** URLs in the range. */
  total: number;
  /** The page, in rank order; rows without a URL stand for no URL (a page past the end). */
  rows: PageRow[];
}

/** A page URL's figures, added up from its rows by event type. */
interface UrlFigures {
  total_events: number;
  unique_sessions: number;
  event_types: { event_type: string; count: number }[];
  last_seen: Date;
}

interface TypeRow {
  content_url: string;
  event_type: string;
  n: string;
  sessions: string;
  last_seen: Date;
}

/**
 * The family a scope's URLs are ranked from (a URL's totals) and the one their
 * event types are read from. Ranking reads lean per-URL rollups (sql/062, sql/071,
 * sql/072), so a long range adds up one row per URL and bucket instead of one per
 * URL, type and bucket; a whole reporter's, one per URL rather than per URL and
 * agent.
 */
function familiesOf(scope: ReadScope): { rank: RollupFamily; types: RollupFamily } {
  if (scope.view === "owner") return { rank: "url_totals", types: "events_by_url" };
  const rank = scope.agentId === null ? "whole_reporter_url_totals" : "reporter_url_totals";
  return { rank, types: "events_by_reporter_url" };
}

export interface UrlPageRequest {
  limit: number;
  offset: number;
  /** What ranks the URLs, descending; ties go by URL. */
  sort: "events" | "sessions";
  /** Only URLs containing this text, ignoring case. */
  contains?: string | undefined;
}

/**
 * URL metrics by total_events (or unique_sessions) descending, then URL (byte
 * order). Two statements: the ranked page, adding up only what ranks the URLs over
 * every URL of the range; then, for the page's URLs alone, their events by type,
 * sessions and latest event. Run it inside one snapshot (the route's
 * withStatementTimeout transaction), so the second statement's figures are those
 * the first ranked by. Over a range with day or longer pieces, an owner's ranking
 * runs in two halves at once when the read has the companion connection
 * (hostHalves), the second in the same snapshot.
 */
export async function listUrls(
  sql: Sql,
  scope: ReadScope,
  range: Range,
  { limit, offset, sort, contains }: UrlPageRequest,
  companion?: ReadCompanion,
) {
  const resolved = await resolve(sql, scope);
  const { rank, types } = familiesOf(scope);
  // strpos, not LIKE: the text is matched as it is, % and _ included.
  const matching = contains === undefined ? sql`true` : sql`strpos(lower(content_url), lower(${contains})) > 0`;
  const pieces = plan(resolved, rank, range, allLevels);
  // Measured on a year of 20 million events (README, Reads): once a range has day
  // or coarser pieces, each holding a row for most URLs, one aggregate over their
  // rows wins (a year 260 to 140 ms); hours alone are cheaper added up piece by piece.
  const rows = pieces.some((piece) => piece.level !== "hour" && piece.level !== "raw") ? "rows" : "grouped";
  // Only the ranking measure: a year's ranking adds up about 200,000 rows, and the
  // sessions and latest event beside the events cost it 12 to 18% (docs/benchmarks.md).
  const ranking = sort === "events" ? eventCount(sql) : resolved.urlSessions;
  const perUrl = (events: Fragment) =>
    unionOfPieces(
      sql,
      rank,
      pieces,
      (source, inRange) => sql`
        SELECT content_url, ${source.measure(ranking)} AS n
        FROM ${source.table} WHERE ${events} AND ${matching} AND ${inRange}
        ${source.groupBy(sql`content_url`)}`,
      rows,
    );
  // Each half sends its leading offset + limit URLs here: deep pages rank in one statement.
  const halves = rows === "rows" && offset + limit <= maxLeadingRows ? hostHalves(resolved.hosts) : undefined;
  const leading = { limit: offset + limit, offset: 0 };
  const both =
    companion && halves
      ? await companion.alongside(
          sql,
          () => rankedRows(sql, perUrl(onHosts(sql, halves[0])), leading),
          (beside) => rankedRows(beside, perUrl(onHosts(sql, halves[1])), leading),
        )
      : undefined;
  const page = both
    ? mergedPage(both, { limit, offset })
    : await rankedRows(sql, perUrl(resolved.events), { limit, offset });
  const urls = page.rows.flatMap((row) => (row.content_url === null ? [] : [row.content_url]));
  const onPage = sql`content_url = ANY (${sql.array(urls)}::text[])`;
  // The rollups' URL index is on this hash and the bucket (sql/068).
  const onPageByKey = sql`hashtextextended(content_url, 0) = ANY (
    ARRAY(SELECT hashtextextended(url, 0) FROM unnest(${sql.array(urls)}::text[]) url)) AND ${onPage}`;
  const perType = unionOfPieces(
    sql,
    types,
    plan(resolved, types, range, allLevels),
    (source, inRange) => sql`
      SELECT content_url, event_type, ${source.measure(eventCount(sql))} AS n,
             ${source.measure(resolved.urlSessions)} AS sessions, ${source.lastSeen} AS last_seen
      FROM ${source.table}
      WHERE ${resolved.events} AND ${source.raw ? onPage : onPageByKey} AND ${inRange}
      ${source.groupBy(sql`content_url, event_type`)}`,
  );
  const typeRows =
    urls.length === 0
      ? []
      : await sql<TypeRow[]>`
          SELECT content_url, event_type, sum(n) AS n, sum(sessions) AS sessions, max(last_seen) AS last_seen
          FROM (${perType}) pieces
          GROUP BY content_url, event_type ORDER BY sum(n) DESC, event_type COLLATE "C"`;

  const figuresOf = new Map<string, UrlFigures>();
  for (const row of typeRows) {
    const known = figuresOf.get(row.content_url);
    const figures = known ?? { total_events: 0, unique_sessions: 0, event_types: [], last_seen: row.last_seen };
    figures.total_events += count(row.n);
    figures.unique_sessions += count(row.sessions);
    figures.event_types.push({ event_type: row.event_type, count: count(row.n) });
    if (row.last_seen > figures.last_seen) figures.last_seen = row.last_seen;
    figuresOf.set(row.content_url, figures);
  }
  return {
    items: urls.map((url) => {
      const figures = figuresOf.get(url);
      if (!figures) throw new Error(`ranked URL ${url} has no figures of its own`);
      return { content_url: url, ...figures, last_seen: iso(figures.last_seen) };
    }),
    total: page.total,
    limit,
    offset,
  };
}

/** One statement: the URLs of `perUrl` (a URL and measure per piece row) added up, counted, and a page of them ranked. */
async function rankedRows(
  sql: Sql,
  perUrl: Fragment,
  { limit, offset }: { limit: number; offset: number },
): Promise<RankedPage> {
  const rows = await sql<PageRow[]>`
    WITH per_url AS (
      SELECT content_url, sum(n) AS n FROM (${perUrl}) pieces GROUP BY content_url
    ), page AS (
      SELECT * FROM per_url ORDER BY n DESC, content_url COLLATE "C" LIMIT ${limit} OFFSET ${offset}
    )
    SELECT totals.total, page.content_url, page.n
    FROM (SELECT count(*) AS total FROM per_url) totals LEFT JOIN page ON true
    ORDER BY page.n DESC, page.content_url COLLATE "C"`;
  return { total: count(rows[0]?.total), rows };
}

/** The deepest page (offset + limit) ranked in halves. */
const maxLeadingRows = 1000;

/**
 * An owner's hosts in two halves, or undefined when there is one. Every URL is on
 * one host, so the halves rank URLs apart: ranked on two connections at once (one
 * per core), then merged, they give the page one statement gives. A year's top-20
 * URLs of 20 million events took 70 to 123 ms so in four runs, against 166 to 221 ms
 * in one statement in three runs alternated with them (bench:reads; docs/benchmarks.md).
 */
function hostHalves(hosts: readonly string[]): [string[], string[]] | undefined {
  if (hosts.length < 2) return undefined;
  return [hosts.filter((_, i) => i % 2 === 0), hosts.filter((_, i) => i % 2 === 1)];
}

/**
 * The page of two halves' leading rows (each ranked up to offset + limit), as one
 * statement over both ranks it: by the measure, then the URL's UTF-8 bytes, as
 * COLLATE "C" orders them.
 */
function mergedPage(halves: readonly RankedPage[], { limit, offset }: { limit: number; offset: number }): RankedPage {
  const ranked = halves
    .flatMap((half) => half.rows)
    .flatMap((row) => (row.content_url === null ? [] : [{ row, n: count(row.n), bytes: Buffer.from(row.content_url) }]))
    .sort((a, b) => b.n - a.n || Buffer.compare(a.bytes, b.bytes));
  return {
    total: halves.reduce((sum, half) => sum + half.total, 0),
    rows: ranked.slice(offset, offset + limit).map(({ row }) => row),
  };
}
