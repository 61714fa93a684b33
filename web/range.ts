/** The periods the overview offers, and how each is read (bucket size and the period before it). */

export const presets = {
  "24h": { label: "24 hours", ms: 24 * 3_600_000, interval: "hour" },
  "7d": { label: "7 days", ms: 7 * 86_400_000, interval: "hour" },
  "30d": { label: "30 days", ms: 30 * 86_400_000, interval: "day" },
  "12m": { label: "12 months", ms: 365 * 86_400_000, interval: "day" },
} as const;
export type Preset = keyof typeof presets;
export type Interval = "hour" | "day" | "week" | "month";

export interface Period {
  since: Date;
  until: Date;
  interval: Interval;
}

export const hourMs = 3_600_000;
const dayMs = 86_400_000;

/** The bucket size that keeps a custom period within a few hundred points. */
function intervalFor(ms: number): Interval {
  if (ms <= 8 * dayMs) return "hour";
  if (ms <= 400 * dayMs) return "day";
  if (ms <= 10 * 365 * dayMs) return "week";
  return "month";
}

/** The longest custom period, a limit of the page's own: a century of months is 1,200 points. */
export const maxCustomYears = 100;

/** A day as `<input type=date>` writes it, within the years the reads take (0001 to 9999). */
const dayPattern = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Midnight UTC of a real calendar day written as YYYY-MM-DD; undefined for anything else (2026-02-30, 0000-01-01). */
function dayOf(text: string): Date | undefined {
  const match = dayPattern.exec(text);
  if (!match || match[1] === "0000") return undefined;
  const date = new Date(`${text}T00:00:00Z`);
  return Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== text ? undefined : date;
}

/** Why a custom period cannot be shown; the page then shows this instead of another period's figures. */
export interface PeriodProblem {
  problem: string;
}

/**
 * The period the page names: a preset, or the custom days given (the end day not
 * included). A preset ends at the next full hour, so that its buckets are whole
 * and a shared link shows the same figures for an hour.
 */
export function periodOf(
  preset: string | null,
  since: string | null,
  until: string | null,
  now = Date.now(),
): Period | PeriodProblem {
  if (preset === "custom") {
    if (!since || !until) return { problem: "Choose the first day of the period and the day it ends before." };
    const from = dayOf(since);
    const to = dayOf(until);
    if (!from || !to) return { problem: "Those are not days of the calendar between the years 0001 and 9999." };
    if (from >= to) {
      return { problem: "The period must start before it ends, and its end day is not included: choose a later one." };
    }
    if (to.getUTCFullYear() - from.getUTCFullYear() > maxCustomYears) {
      return { problem: `A custom period spans at most ${maxCustomYears} years.` };
    }
    return { since: from, until: to, interval: intervalFor(to.getTime() - from.getTime()) };
  }
  const chosen = presets[(preset ?? "30d") as Preset] ?? presets["30d"];
  const end = Math.ceil(now / hourMs) * hourMs;
  return { since: new Date(end - chosen.ms), until: new Date(end), interval: chosen.interval };
}

/** The period of the same length just before. */
export function previousOf(period: Period): Period {
  const length = period.until.getTime() - period.since.getTime();
  return { since: new Date(period.since.getTime() - length), until: period.since, interval: period.interval };
}
