import { joined } from "../../db/fragments.ts";
import type { Fragment, Sql } from "../../db/sql.ts";
import type { Measure } from "./measures.ts";
import type { Piece } from "./plan.ts";
import { type RollupFamily, rollupView } from "./rollups.ts";

/** Where one piece of a range is read: a rollup at the piece's level, or the raw rows. */
export interface PieceSource {
  table: Fragment;
  /** The bucket start (rollups) or row time (raw). */
  time: Fragment;
  /** A measure as this source computes it. */
  measure(measure: Measure): Fragment;
  /** Latest event time (URL families only). */
  lastSeen: Fragment;
  /** Extra filter the raw rows need to match the rollup's definition. */
  rawFilter: Fragment;
}

/** Families that roll up only events with a URL (sql/031, sql/062). */
const urlFamilies: ReadonlySet<RollupFamily> = new Set(["events_by_url", "events_by_reporter_url", "url_totals"]);

export function pieceSource(sql: Sql, family: RollupFamily, piece: Piece): PieceSource {
  const view = piece.level === "raw" ? undefined : rollupView(family, piece.level);
  if (view) {
    return {
      table: sql`${sql(view)}`,
      time: sql`bucket`,
      measure: (measure) => measure.rollup,
      lastSeen: sql`max(last_seen)`,
      rawFilter: sql`true`,
    };
  }
  return {
    table: sql`events`,
    time: sql`event_time`,
    measure: (measure) => measure.raw,
    lastSeen: sql`max(event_time)`,
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
): Fragment {
  // An empty range still needs a well-formed sub-select: one raw piece matching nothing.
  const nonEmpty: readonly Piece[] =
    pieces.length > 0 ? pieces : [{ level: "raw", start: new Date(0), end: new Date(0) }];
  const parts = nonEmpty.map((piece) => {
    const source = pieceSource(sql, family, piece);
    const inRange = sql`${source.time} >= ${piece.start} AND ${source.time} < ${piece.end} AND ${source.rawFilter}`;
    return select(source, inRange);
  });
  return joined(sql, parts, sql` UNION ALL `);
}
