import uPlot from "uplot";
import type { TimeseriesAnswer } from "./api.ts";
import { h } from "./dom.ts";
import type { Period } from "./range.ts";

/**
 * Events per bucket, one line per event type. uPlot: about 50 KB, draws tens of
 * thousands of points on a canvas in milliseconds, and needs nothing else; a year
 * of hourly buckets stays smooth where SVG charts slow down.
 */
const palette = ["#1f5fbf", "#c2410c", "#15803d", "#7e22ce", "#b91c1c", "#0e7490", "#a16207", "#4b5563"];

const bucketMs = { hour: 3_600_000, day: 86_400_000 } as const;

/**
 * Bucket starts across the period: every bucket for hours and days (the API lists
 * only non-empty ones; a count line drops to zero between them), the answer's own
 * for weeks and months.
 */
function bucketStarts(series: TimeseriesAnswer, period: Period): number[] {
  const given = series.buckets.map((bucket) => Date.parse(bucket.bucket_start));
  const step = bucketMs[series.interval as keyof typeof bucketMs];
  if (!step) return given;
  const starts: number[] = [];
  for (let at = Math.floor(period.since.getTime() / step) * step; at < period.until.getTime(); at += step)
    starts.push(at);
  return starts;
}

// Counts are whole: ticks at whole steps only.
const countSteps = [1, 2, 5]
  .flatMap((base) => [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8].map((p) => base * p))
  .sort((a, b) => a - b);

export function eventsChart(series: TimeseriesAnswer, period: Period): HTMLElement {
  const types = [...new Set(series.buckets.flatMap((bucket) => bucket.events_by_type.map((t) => t.event_type)))].sort();
  const figure = h("figure", { class: "chart" });
  if (series.buckets.length === 0) {
    figure.append(h("p", { class: "muted" }, "No events in this period."));
    return figure;
  }
  const byStart = new Map(series.buckets.map((bucket) => [Date.parse(bucket.bucket_start), bucket]));
  const starts = bucketStarts(series, period);
  const times = starts.map((start) => start / 1000);
  const lines = types.map((type) =>
    starts.map((start) => byStart.get(start)?.events_by_type.find((t) => t.event_type === type)?.count ?? 0),
  );
  const options: uPlot.Options = {
    width: 800,
    height: 260,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
    series: [
      { label: "Time (UTC)" },
      ...types.map((type, i) => ({ label: type, stroke: palette[i % palette.length], width: 2 })),
    ],
    scales: {
      x: { time: true, range: [period.since.getTime() / 1000, period.until.getTime() / 1000] },
      y: { range: (_plot, _min, max) => [0, Math.max(1, max)] },
    },
    axes: [{}, { size: 60, incrs: countSteps }],
  };
  const plot = new uPlot(options, [times, ...lines], figure);
  // Fit the chart to its container, phones included.
  const fit = () => plot.setSize({ width: Math.max(280, figure.clientWidth), height: 260 });
  new ResizeObserver(fit).observe(figure);
  figure.append(
    h(
      "figcaption",
      { class: "muted" },
      `Events per ${series.interval} by type, ${series.buckets.length} non-empty buckets`,
    ),
  );
  return figure;
}
