import { describe, expect, test } from "bun:test";
import { levels, type Piece, planRange } from "../../src/modules/reads/plan.ts";

const order = [levels.month, levels.day, levels.hour];
const at = (iso: string) => new Date(iso);
const show = (pieces: Piece[]) => pieces.map((p) => `${p.level} ${p.start.toISOString()} ${p.end.toISOString()}`);

/** Pieces must tile the range exactly: contiguous, in order, nothing twice. */
function expectTiles(pieces: Piece[], since: Date, until: Date) {
  expect(pieces[0]?.start).toEqual(since);
  expect(pieces.at(-1)?.end).toEqual(until);
  for (let i = 1; i < pieces.length; i++) expect(pieces[i]?.start).toEqual(pieces[i - 1]?.end as Date);
}

describe("range planning", () => {
  test("ranges in the years 0001 to 0099 tile within themselves (no 19xx months)", () => {
    const since = at("0010-01-15T00:00:00Z");
    const until = at("0050-03-01T00:00:00Z");
    const pieces = planRange(since, until, order);
    expectTiles(pieces, since, until);
    expect(show(pieces)).toEqual([
      "day 0010-01-15T00:00:00.000Z 0010-02-01T00:00:00.000Z",
      "month 0010-02-01T00:00:00.000Z 0050-03-01T00:00:00.000Z",
    ]);
  });

  test("an unaligned range is whole months in the middle, days and hours at the edges, raw for the rest", () => {
    const since = at("2026-01-30T22:15:00.500Z");
    const until = at("2026-04-02T01:30:00Z");
    const pieces = planRange(since, until, order);
    expectTiles(pieces, since, until);
    expect(show(pieces)).toEqual([
      "raw 2026-01-30T22:15:00.500Z 2026-01-30T23:00:00.000Z",
      "hour 2026-01-30T23:00:00.000Z 2026-01-31T00:00:00.000Z",
      "day 2026-01-31T00:00:00.000Z 2026-02-01T00:00:00.000Z",
      "month 2026-02-01T00:00:00.000Z 2026-04-01T00:00:00.000Z",
      "day 2026-04-01T00:00:00.000Z 2026-04-02T00:00:00.000Z",
      "hour 2026-04-02T00:00:00.000Z 2026-04-02T01:00:00.000Z",
      "raw 2026-04-02T01:00:00.000Z 2026-04-02T01:30:00.000Z",
    ]);
  });

  test("with week and quarter levels, a year is quarters in the middle, then months, weeks, days and hours", () => {
    const since = at("2025-11-23T17:30:00Z");
    const until = at("2026-11-23T17:30:00Z");
    const pieces = planRange(since, until, [levels.quarter, levels.month, levels.week, levels.day, levels.hour]);
    expectTiles(pieces, since, until);
    expect(show(pieces)).toEqual([
      "raw 2025-11-23T17:30:00.000Z 2025-11-23T18:00:00.000Z",
      "hour 2025-11-23T18:00:00.000Z 2025-11-24T00:00:00.000Z",
      "week 2025-11-24T00:00:00.000Z 2025-12-01T00:00:00.000Z",
      "month 2025-12-01T00:00:00.000Z 2026-01-01T00:00:00.000Z",
      "quarter 2026-01-01T00:00:00.000Z 2026-10-01T00:00:00.000Z",
      "month 2026-10-01T00:00:00.000Z 2026-11-01T00:00:00.000Z",
      "day 2026-11-01T00:00:00.000Z 2026-11-02T00:00:00.000Z",
      "week 2026-11-02T00:00:00.000Z 2026-11-23T00:00:00.000Z",
      "hour 2026-11-23T00:00:00.000Z 2026-11-23T17:00:00.000Z",
      "raw 2026-11-23T17:00:00.000Z 2026-11-23T17:30:00.000Z",
    ]);
  });

  test("weeks start on Mondays and quarters on 1 January, April, July and October, also before 1970 and 100", () => {
    const start = (level: typeof levels.week, iso: string) => new Date(level.floor(at(iso).getTime())).toISOString();
    expect(start(levels.week, "2026-11-22T23:59:59Z")).toBe("2026-11-16T00:00:00.000Z");
    expect(start(levels.week, "1969-12-31T12:00:00Z")).toBe("1969-12-29T00:00:00.000Z");
    expect(start(levels.quarter, "2026-06-30T23:59:59Z")).toBe("2026-04-01T00:00:00.000Z");
    expect(start(levels.quarter, "0050-12-31T00:00:00Z")).toBe("0050-10-01T00:00:00.000Z");
    expect(new Date(levels.quarter.next(at("0050-10-01T00:00:00Z").getTime())).toISOString()).toBe(
      "0051-01-01T00:00:00.000Z",
    );
  });

  test("a stale bucket is read one level finer, down to raw rows", () => {
    const since = at("2026-02-01T00:00:00Z");
    const until = at("2026-04-01T00:00:00Z");
    const lateAt = at("2026-03-10T05:20:00Z").getTime();
    const pieces = planRange(since, until, order, {
      month: [{ lowestMs: lateAt, greatestMs: lateAt }],
      day: [{ lowestMs: lateAt, greatestMs: lateAt }],
      hour: [{ lowestMs: lateAt, greatestMs: lateAt + 1 }],
    });
    expectTiles(pieces, since, until);
    expect(show(pieces)).toEqual([
      "month 2026-02-01T00:00:00.000Z 2026-03-01T00:00:00.000Z",
      "day 2026-03-01T00:00:00.000Z 2026-03-10T00:00:00.000Z",
      "hour 2026-03-10T00:00:00.000Z 2026-03-10T05:00:00.000Z",
      "raw 2026-03-10T05:00:00.000Z 2026-03-10T06:00:00.000Z",
      "hour 2026-03-10T06:00:00.000Z 2026-03-11T00:00:00.000Z",
      "day 2026-03-11T00:00:00.000Z 2026-04-01T00:00:00.000Z",
    ]);
  });

  test("unbounded stale ranges (never refreshed) fall through to raw rows", () => {
    const since = at("2026-01-01T00:00:00Z");
    const until = at("2027-01-01T00:00:00Z");
    const everything = [{ lowestMs: -9.2e15, greatestMs: 9.2e15 }];
    const pieces = planRange(since, until, order, { month: everything, day: everything, hour: everything });
    expect(show(pieces)).toEqual(["raw 2026-01-01T00:00:00.000Z 2027-01-01T00:00:00.000Z"]);
  });

  test("an empty range has no pieces, and no levels means raw rows", () => {
    expect(planRange(at("2026-01-01T00:00:00Z"), at("2026-01-01T00:00:00Z"), order)).toEqual([]);
    expect(show(planRange(at("2026-01-01T00:00:00Z"), at("2026-02-01T00:00:00Z"), []))).toEqual([
      "raw 2026-01-01T00:00:00.000Z 2026-02-01T00:00:00.000Z",
    ]);
  });
});
