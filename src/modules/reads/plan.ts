/**
 * Splits a time range into pieces answered by rollups of decreasing bucket size
 * and, for what no whole bucket covers, by raw rows. Pure: the caller supplies
 * the levels to use (coarsest first) and, per level, the time ranges whose
 * materialised buckets are stale; a stale bucket is answered one level finer.
 */

const hourMs = 3_600_000;
const dayMs = 86_400_000;
const weekMs = 7 * dayMs;
// 1970-01-05, the first Monday of the epoch: weeks start on Mondays, as
// TimescaleDB's time_bucket('1 week') and date_trunc('week') have them.
const firstMondayMs = 4 * dayMs;

export interface Level {
  name: "hour" | "day" | "week" | "month" | "quarter";
  /** Start of the bucket holding `ms`. */
  floor(ms: number): number;
  /** Start of the bucket after the one starting at `start`. */
  next(start: number): number;
}

const fixed = (name: Level["name"], size: number, origin = 0): Level => ({
  name,
  floor: (ms) => Math.floor((ms - origin) / size) * size + origin,
  next: (start) => start + size,
});

/** Calendar months in groups of `months`, from January (as time_bucket's months from 2000-01-01). */
// Through setters rather than Date.UTC, which reads years 0 to 99 as 1900 to 1999.
const months = (name: Level["name"], count: number): Level => ({
  name,
  floor(ms) {
    const d = new Date(ms);
    d.setUTCMonth(d.getUTCMonth() - (d.getUTCMonth() % count), 1);
    return d.setUTCHours(0, 0, 0, 0);
  },
  next(start) {
    const d = new Date(start);
    return d.setUTCMonth(d.getUTCMonth() + count, 1);
  },
});

export const levels = {
  hour: fixed("hour", hourMs),
  day: fixed("day", dayMs),
  week: fixed("week", weekMs, firstMondayMs),
  month: months("month", 1),
  quarter: months("quarter", 3),
} satisfies Record<Level["name"], Level>;

/** An inclusive range of epoch milliseconds (may exceed the Date range: unbounded). */
export interface StaleRange {
  lowestMs: number;
  greatestMs: number;
}

export interface Piece {
  level: Level["name"] | "raw";
  start: Date;
  end: Date;
}

function ceil(level: Level, ms: number): number {
  const floor = level.floor(ms);
  return floor === ms ? ms : level.next(floor);
}

/** Buckets of `level` within [from, to) that a stale range touches, merged, in order. */
function staleSpans(level: Level, from: number, to: number, stale: readonly StaleRange[]): [number, number][] {
  const spans: [number, number][] = [];
  for (const range of [...stale].sort((a, b) => a.lowestMs - b.lowestMs)) {
    const lo = Math.max(range.lowestMs, from);
    const hi = Math.min(range.greatestMs, to - 1);
    if (lo > hi) continue;
    const start = level.floor(lo);
    const end = level.next(level.floor(hi));
    const last = spans.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else spans.push([start, end]);
  }
  return spans;
}

function cover(
  from: number,
  to: number,
  order: readonly Level[],
  stale: Partial<Record<Level["name"], readonly StaleRange[]>>,
): Piece[] {
  if (from >= to) return [];
  const [level, ...finer] = order;
  if (!level) return [{ level: "raw", start: new Date(from), end: new Date(to) }];
  const first = ceil(level, from);
  const last = level.floor(to);
  if (first >= last) return cover(from, to, finer, stale);
  const pieces = cover(from, first, finer, stale);
  let cursor = first;
  for (const [start, end] of staleSpans(level, first, last, stale[level.name] ?? [])) {
    if (start > cursor) pieces.push({ level: level.name, start: new Date(cursor), end: new Date(start) });
    pieces.push(...cover(Math.max(cursor, start), end, finer, stale));
    cursor = end;
  }
  if (cursor < last) pieces.push({ level: level.name, start: new Date(cursor), end: new Date(last) });
  pieces.push(...cover(last, to, finer, stale));
  return pieces;
}

/** The pieces answering [since, until), coarsest level first in `order`. */
export function planRange(
  since: Date,
  until: Date,
  order: readonly Level[],
  stale: Partial<Record<Level["name"], readonly StaleRange[]>> = {},
): Piece[] {
  return cover(since.getTime(), until.getTime(), order, stale);
}
