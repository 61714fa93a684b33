import { joined } from "../../db/fragments.ts";
import type { Fragment, Sql } from "../../db/sql.ts";
import type { Measure } from "./measures.ts";
import type { Piece } from "./plan.ts";
import { type RollupFamily, rollupView } from "./rollups.ts";

/** Where one piece of a range is read: a rollup at the piece's level, or the raw rows. */
export interface PieceSource {
  table: Fragment;
  /** Raw events rather than a rollup. */
  raw: boolean;
  /** The bucket start (rollups) or row time (raw). */
  time: Fragment;
  /** A measure as this source computes it. */
  measure(measure: Measure): Fragment;
  /** Latest event time (URL families only). */
  lastSeen: Fragment;
  /** `GROUP BY keys`, or nothing where the source's rows are passed on one by one. */
  groupBy(keys: Fragment): Fragment;
  /** Extra filter the raw rows need to match the rollup's definition. */
  rawFilter: Fragment;
}

/**
 * How rollup pieces are read: `grouped`, each piece adds up its own rows per
 * group; `rows`, a rollup piece passes its rows on as they are, for the caller's
 * one aggregate over all pieces. Rows suit reads whose pieces each hold about the
 * same groups (a year's top URLs: every piece has a row for most of the owner's
 * 10,000 URLs), which would otherwise be hashed twice. Raw pieces are grouped
 * either way: their rows are single events.
 */
export type PieceRows = "grouped" | "rows";

/** Families that roll up only events with a URL (sql/031, sql/062, sql/071, sql/072). */
const urlFamilies: ReadonlySet<RollupFamily> = new Set([
  "events_by_url",
  "events_by_reporter_url",
  "url_totals",
  "reporter_url_totals",
  "whole_reporter_url_totals",
]);

export function pieceSource(sql: Sql, family: RollupFamily, piece: Piece, rows: PieceRows = "grouped"): PieceSource {
  const view = piece.level === "raw" ? undefined : rollupView(family, piece.level);
  const groupBy = (keys: Fragment) => sql`GROUP BY ${keys}`;
  if (view && rows === "rows") {
    return {
      table: sql`${sql(view)}`,
      raw: false,
      time: sql`bucket`,
      measure: (measure) => measure.row,
      lastSeen: sql`last_seen`,
      groupBy: () => sql``,
      rawFilter: sql`true`,
    };
  }
  if (view) {
    return {
      table: sql`${sql(view)}`,
      raw: false,
      time: sql`bucket`,
      measure: (measure) => sql`sum(${measure.row})`,
      lastSeen: sql`max(last_seen)`,
      groupBy,
      rawFilter: sql`true`,
    };
  }
  return {
    table: sql`events`,
    raw: true,
    time: sql`event_time`,
    measure: (measure) => measure.raw,
    lastSeen: sql`max(event_time)`,
    groupBy,
    rawFilter: urlFamilies.has(family) ? sql`content_url IS NOT NULL` : sql`true`,
  };
}

/**
 * UNION ALL of one sub-select per piece. `select` builds a piece's sub-select
 * from its source and its time condition (half-open [start, end)).
 */
export function unionOfPieces(
  sql: Sql,
  family: RollupFamily,
  pieces: readonly Piece[],
  select: (source: PieceSource, inRange: Fragment) => Fragment,
  rows: PieceRows = "grouped",
): Fragment {
  // An empty range still needs a well-formed sub-select: one raw piece matching nothing.
  const nonEmpty: readonly Piece[] =
    pieces.length > 0 ? pieces : [{ level: "raw", start: new Date(0), end: new Date(0) }];
  const parts = nonEmpty.map((piece) => {
    const source = pieceSource(sql, family, piece, rows);
    const inRange = sql`${source.time} >= ${piece.start} AND ${source.time} < ${piece.end} AND ${source.rawFilter}`;
    return select(source, inRange);
  });
  return joined(sql, parts, sql` UNION ALL `);
}
