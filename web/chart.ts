import uPlot from "uplot";
import { levels } from "../src/modules/reads/plan.ts";
import type { TimeseriesAnswer } from "./api.ts";
import { formatCount, h, readable, scrollBox } from "./dom.ts";
import type { Interval, Period } from "./range.ts";

/**
 * Counts over time, one line per series. uPlot: about 50 KB, draws tens of
 * thousands of points on a canvas in milliseconds, and needs nothing else; a year
 * of hourly buckets stays smooth where SVG charts slow down.
 */
const palette = ["#1f5fbf", "#c2410c", "#15803d", "#7e22ce", "#b91c1c", "#0e7490", "#a16207", "#4b5563"];

/**
 * Every bucket start of `interval` across the period, as the reads' buckets start
 * (weeks on Mondays, calendar months): the APIs list only non-empty buckets, and
 * the lines must drop to zero between them, not run straight across a gap.
 */
export function everyBucket(period: Period, interval: Interval): number[] {
  const level = levels[interval];
  const starts: number[] = [];
  for (let at = level.floor(period.since.getTime()); at < period.until.getTime(); at = level.next(at)) {
    starts.push(at);
  }
  return starts;
}

// Counts are whole: ticks at whole steps only.
const countSteps = [1, 2, 5]
  .flatMap((base) => [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8].map((p) => base * p))
  .sort((a, b) => a - b);

export interface CountSeries {
  label: string;
  /** One count per bucket start. */
  values: number[];
}

/**
 * A line chart of counts at `starts` (epoch ms), one per `interval`, over the
 * period, or `empty` in words when there is nothing.
 */
export function countsChart(
  starts: number[],
  series: CountSeries[],
  period: Period,
  interval: Interval,
  caption: string,
  empty: string,
): HTMLElement {
  const figure = h("figure", { class: "chart" });
  if (series.every((line) => line.values.every((value) => value === 0))) {
    figure.append(h("p", { class: "muted" }, empty));
    return figure;
  }
  const options: uPlot.Options = {
    width: 800,
    height: 260,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
    series: [
      { label: "Time (UTC)" },
      ...series.map((line, i) => ({ label: line.label, stroke: palette[i % palette.length], width: 2 })),
    ],
    scales: {
      // From the first bucket's start, which comes before the period's own start when
      // the period begins within a bucket (the last 24 hours, by hour or by day).
      x: { time: true, range: [(starts[0] ?? period.since.getTime()) / 1000, period.until.getTime() / 1000] },
      y: { range: (_plot, _min, max) => [0, Math.max(1, max)] },
    },
    axes: [{}, { size: 60, incrs: countSteps }],
  };
  const plot = new uPlot(options, [starts.map((start) => start / 1000), ...series.map((line) => line.values)], figure);
  // The canvas says in words what it draws; its figures are in the table below it.
  const canvas = plot.root.querySelector("canvas");
  canvas?.setAttribute("role", "img");
  canvas?.setAttribute("aria-label", caption);
  keyboardLegend(plot);
  // Fit the chart to its box, phones included: the box inside the padding, or its right edge is cut off.
  new ResizeObserver(([entry]) =>
    plot.setSize({ width: Math.max(280, Math.floor(entry?.contentRect.width ?? 0)), height: 260 }),
  ).observe(figure);
  figure.append(h("figcaption", { class: "muted" }, caption), figuresTable(starts, series, interval, caption));
  return figure;
}

/**
 * What the chart draws, as a table a screen reader can read and anyone can copy:
 * one row per bucket with a count (the empty ones are the chart's flat stretches).
 */
function figuresTable(starts: number[], series: CountSeries[], interval: Interval, caption: string): HTMLElement {
  const rows = starts
    .map((start, i) => ({ start, counts: series.map((line) => line.values[i] ?? 0) }))
    .filter((row) => row.counts.some((count) => count > 0));
  const bucket = `${interval[0]?.toUpperCase()}${interval.slice(1)} (UTC)`;
  return h(
    "details",
    {},
    h("summary", {}, "The chart's figures"),
    scrollBox(
      h(
        "table",
        {},
        h("caption", {}, caption),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", { scope: "col" }, bucket),
            ...series.map((line) => h("th", { scope: "col" }, line.label)),
          ),
        ),
        h(
          "tbody",
          {},
          ...rows.map((row) =>
            h(
              "tr",
              {},
              h("th", { scope: "row" }, readable(row.start)),
              ...row.counts.map((count) => h("td", { class: "num" }, formatCount(count))),
            ),
          ),
        ),
      ),
    ),
  );
}

/**
 * uPlot shows or hides a line when its name in the legend is clicked; this makes
 * each name a button the keyboard reaches and presses too, saying whether the line
 * shows. The legend is a key, not a table of figures: the table below the chart is that.
 */
function keyboardLegend(plot: uPlot): void {
  plot.root.querySelector(".u-legend")?.setAttribute("role", "none");
  plot.root.querySelectorAll<HTMLElement>(".u-legend .u-series").forEach((row, i) => {
    const name = row.querySelector("th");
    if (i === 0 || !name) return;
    const showing = () => name.setAttribute("aria-pressed", String(plot.series[i]?.show !== false));
    name.setAttribute("role", "button");
    name.tabIndex = 0;
    showing();
    name.addEventListener("click", showing);
    name.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();
      name.click();
    });
  });
}

/** Events per bucket of a timeseries answer, one line per event type. */
export function eventsChart(answer: TimeseriesAnswer, period: Period): HTMLElement {
  const types = [...new Set(answer.buckets.flatMap((bucket) => bucket.events_by_type.map((t) => t.event_type)))].sort();
  const byStart = new Map(answer.buckets.map((bucket) => [Date.parse(bucket.bucket_start), bucket]));
  const starts = everyBucket(period, answer.interval);
  return countsChart(
    starts,
    types.map((type) => ({
      label: type,
      values: starts.map((start) => byStart.get(start)?.events_by_type.find((t) => t.event_type === type)?.count ?? 0),
    })),
    period,
    answer.interval,
    `Events per ${answer.interval} by type, ${answer.buckets.length} non-empty buckets`,
    "No events in this period.",
  );
}
