import { type FieldError, invalid } from "../../core/problem.ts";
import type { Interval } from "./model.ts";
import type { Range } from "./read-context.ts";

const isoPattern = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2}))?$/i;

/**
 * Parses an ISO 8601 date (meaning 00:00 UTC) or a date-time with a zone (`Z`
 * or `±HH:MM`), to millisecond precision; undefined when it is not one. A finer
 * fraction rounds up to the next millisecond: event times are stored to the
 * millisecond, so an inclusive `since` and an exclusive `until` select exactly
 * the events they would at full precision.
 */
export function parseIsoTime(value: string): Date | undefined {
  const match = isoPattern.exec(value);
  if (!match) return undefined;
  const [, year, month, day, hour = "00", minute = "00", second = "00", fraction = "", zone = "Z"] = match;
  const calendar = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (calendar.getUTCMonth() !== Number(month) - 1 || calendar.getUTCDate() !== Number(day)) return undefined;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return undefined;
  const millis = fraction.padEnd(3, "0").slice(0, 3);
  const parsed = new Date(`${year}-${month}-${day}T${hour}:${minute}:${second}.${millis}${zone.toUpperCase()}`);
  if (Number.isNaN(parsed.getTime())) return undefined;
  return /[1-9]/.test(fraction.slice(3)) ? new Date(parsed.getTime() + 1) : parsed;
}

const epoch = new Date(0);
// PostgreSQL and ISO 8601 output (`toISOString`) both need four-digit years of the common era.
const earliest = Date.parse("0001-01-01T00:00:00.000Z");
const latest = Date.parse("9999-12-31T23:59:59.999Z");

function timeError(field: string, value: string | undefined, parsed: Date | null | undefined): FieldError | undefined {
  if (value === undefined) return undefined;
  if (!parsed) return { path: field, message: "must be an ISO 8601 date or date-time with a zone" };
  const ms = parsed.getTime();
  if (ms < earliest || ms > latest) return { path: field, message: "must lie in the years 0001 to 9999 (UTC)" };
  return undefined;
}

/**
 * The period of a read: `since` omitted is the beginning of time (reported as
 * 1970-01-01T00:00:00Z), `until` omitted is open-ended. Unparsable times, times
 * outside the years 0001 to 9999 UTC, and since after until are 400 naming the field.
 */
export function parseRange(query: { since?: string; until?: string }): Range {
  const errors: FieldError[] = [];
  const since = query.since === undefined ? epoch : parseIsoTime(query.since);
  const until = query.until === undefined ? null : parseIsoTime(query.until);
  for (const error of [timeError("/since", query.since, since), timeError("/until", query.until, until)]) {
    if (error) errors.push(error);
  }
  if (errors.length === 0 && since && until && since.getTime() > until.getTime()) {
    // A since left out is not the caller's to fix: the until they sent is.
    errors.push(
      query.since === undefined
        ? { path: "/until", message: `must not be before ${epoch.toISOString()}, where a period without since begins` }
        : { path: "/since", message: "must not be after until" },
    );
  }
  if (errors.length > 0) {
    throw invalid(`the query parameters are invalid: ${errors.map((e) => e.path).join(", ")}`, errors);
  }
  return { since: since as Date, until: until as Date | null };
}

/** Most buckets one timeseries request may span: every list has a bound, buckets too. */
export const maxTimeseriesBuckets = 25_000;
const bucketMs: Record<Exclude<Interval, "month">, number> = {
  hour: 3_600_000,
  day: 86_400_000,
  week: 7 * 86_400_000,
};

/** How many buckets of `interval` the period spans: calendar months for month, the period's length otherwise. */
function bucketsSpanned(since: Date, until: Date, interval: Interval): number {
  if (interval !== "month") return (until.getTime() - since.getTime()) / bucketMs[interval];
  return (until.getUTCFullYear() - since.getUTCFullYear()) * 12 + until.getUTCMonth() - since.getUTCMonth();
}

/**
 * The period of a timeseries, which may span at most `maxTimeseriesBuckets`
 * buckets of its interval (until omitted counts up to now); longer is 400 naming
 * `since`, so the caller narrows the range or picks a coarser interval.
 */
export function parseTimeseriesRange(query: { since?: string; until?: string }, interval: Interval): Range {
  const range = parseRange(query);
  if (bucketsSpanned(range.since, range.until ?? new Date(), interval) > maxTimeseriesBuckets) {
    const message = `spans more than ${maxTimeseriesBuckets} ${interval} buckets; set a later since or a coarser interval`;
    throw invalid(`the query parameters are invalid: /since ${message}`, [{ path: "/since", message }]);
  }
  return range;
}
