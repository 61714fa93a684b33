/** Event times as PostgreSQL stores them. */

/** A time as ISO 8601 text for a parameter: text as it was sent (its microseconds kept), a Date as its own. */
export function isoTime(time: Date | string): string;
export function isoTime(time: Date | string | null): string | null;
export function isoTime(time: Date | string | null): string | null {
  return time instanceof Date ? time.toISOString() : time;
}

/**
 * Epoch microseconds of a time given as a Date or as ISO 8601 text, as PostgreSQL
 * stores it: the fraction of a second read as a double, times a million, rounded
 * half to even (ParseFractionalSecond).
 */
export function microseconds(time: Date | string): number {
  if (typeof time !== "string") return time.getTime() * 1000;
  const fraction = /\.(\d+)/.exec(time)?.[1];
  const whole = Date.parse(time.replace(/\.\d+/, ""));
  if (fraction === undefined) return whole * 1000;
  const scaled = Number(`0.${fraction}`) * 1_000_000;
  const rounded = Math.abs(scaled % 1) === 0.5 ? 2 * Math.round(scaled / 2) : Math.round(scaled);
  return whole * 1000 + rounded;
}
