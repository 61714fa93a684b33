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

const hourMs = 3_600_000;
const dayMs = 86_400_000;

/** The bucket size that keeps a custom period within a few hundred points. */
function intervalFor(ms: number): Interval {
  if (ms <= 8 * dayMs) return "hour";
  if (ms <= 400 * dayMs) return "day";
  return "week";
}

/** A preset ends at the next full hour, so that its buckets are whole and a shared link shows the same figures for an hour. */
export function periodOf(preset: string | null, since: string | null, until: string | null, now = Date.now()): Period {
  if (preset === "custom" && since && until) {
    const from = new Date(since);
    const to = new Date(until);
    if (!Number.isNaN(from.getTime()) && !Number.isNaN(to.getTime()) && from < to) {
      return { since: from, until: to, interval: intervalFor(to.getTime() - from.getTime()) };
    }
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
