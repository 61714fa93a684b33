import { describe, expect, test } from "bun:test";
import { maxTimeseriesBuckets, parseIsoTime } from "../../src/modules/reads/params.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";

async function expectInvalid(path: string, key: string, field: string) {
  const res = await call("GET", path, { key });
  expect({ path, status: res.status }).toEqual({ path, status: 400 });
  expect(res.body.code).toBe("validation_failed");
  expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
}

describe("read parameters", () => {
  test("unparsable times, since after until, negative offsets and oversized pages are 400 naming the field", async () => {
    const owner = await createTestOrg();
    for (const prefix of ["/content-owners", "/agent"]) {
      await expectInvalid(`${prefix}/summary?since=yesterday`, owner.key, "/since");
      await expectInvalid(`${prefix}/summary?until=2026-02-30`, owner.key, "/until");
      await expectInvalid(`${prefix}/summary?since=2026-01-01T10:00:00`, owner.key, "/since");
      await expectInvalid(`${prefix}/summary?since=2026-03-01&until=2026-02-01`, owner.key, "/since");
      // Without since, the period begins at 1970: the until sent is what to fix.
      await expectInvalid(`${prefix}/summary?until=1969-12-31`, owner.key, "/until");
      await expectInvalid(`${prefix}/summary?since=0000-01-01`, owner.key, "/since");
      await expectInvalid(`${prefix}/events?since=0001-01-01T00:00:00%2B01:00`, owner.key, "/since");
      await expectInvalid(`${prefix}/urls?until=9999-12-31T23:59:59-23:59`, owner.key, "/until");
      await expectInvalid(`${prefix}/timeseries?until=9999-12-31T23:59:59-00:01`, owner.key, "/until");
      await expectInvalid(`${prefix}/events?offset=-1`, owner.key, "/offset");
      await expectInvalid(`${prefix}/events?offset=1e20`, owner.key, "/offset");
      await expectInvalid(`${prefix}/urls?offset=9223372036854775807`, owner.key, "/offset");
      await expectInvalid(`${prefix}/events?limit=1001`, owner.key, "/limit");
      await expectInvalid(`${prefix}/events?limit=0`, owner.key, "/limit");
      await expectInvalid(`${prefix}/urls?limit=201`, owner.key, "/limit");
      await expectInvalid(`${prefix}/urls?offset=x`, owner.key, "/offset");
      await expectInvalid(`${prefix}/urls?url_contains=`, owner.key, "/url_contains");
      await expectInvalid(`${prefix}/urls?sort=last_seen`, owner.key, "/sort");
      await expectInvalid(`${prefix}/urls?url_contains=${"a".repeat(201)}`, owner.key, "/url_contains");
      await expectInvalid(`${prefix}/timeseries?interval=year`, owner.key, "/interval");
      await expectInvalid(`${prefix}/export?format=xml`, owner.key, "/format");
    }
    await expectInvalid("/content-owners/summary?delegated_from=not-a-uuid", owner.key, "/delegated_from");
  });

  test("defaults and the documented maximum page sizes are accepted", async () => {
    const owner = await createTestOrg();
    const events = await call("GET", "/content-owners/events", { key: owner.key });
    expect(events.body).toMatchObject({ limit: 100, offset: 0 });
    const urls = await call("GET", "/content-owners/urls", { key: owner.key });
    expect(urls.body).toMatchObject({ limit: 20, offset: 0 });
    expect((await call("GET", "/content-owners/events?limit=1000&offset=5", { key: owner.key })).body).toMatchObject({
      limit: 1000,
      offset: 5,
    });
    expect((await call("GET", "/content-owners/urls?limit=200", { key: owner.key })).status).toBe(200);
    const summary = await call("GET", "/content-owners/summary?since=2026-01-01&until=2026-01-01", { key: owner.key });
    expect(summary.body).toMatchObject({
      total_events: 0,
      period_start: "2026-01-01T00:00:00.000Z",
      period_end: "2026-01-01T00:00:00.000Z",
    });
    for (const path of ["summary", "events", "urls"]) {
      const separator = path.endsWith("&") ? "" : "?";
      const widest = await call(
        "GET",
        `/content-owners/${path}${separator}since=0001-01-01&until=9999-12-31T23:59:59.999Z`,
        {
          key: owner.key,
        },
      );
      expect({ path, status: widest.status }).toEqual({ path, status: 200 });
    }
    const open = await call("GET", "/content-owners/summary", { key: owner.key });
    expect(open.body).toMatchObject({ period_start: "1970-01-01T00:00:00.000Z", period_end: null });
  });

  test(`a timeseries spans at most ${maxTimeseriesBuckets} buckets of its interval`, async () => {
    const owner = await createTestOrg();
    for (const prefix of ["/content-owners", "/agent"]) {
      // Daily and coarser from the default since (1970) fit; hourly needs a since within ~2.8 years.
      for (const interval of ["day", "week", "month"]) {
        expect((await call("GET", `${prefix}/timeseries?interval=${interval}`, { key: owner.key })).status).toBe(200);
      }
      await expectInvalid(`${prefix}/timeseries?interval=hour`, owner.key, "/since");
      await expectInvalid(`${prefix}/timeseries?interval=week&since=0001-01-01`, owner.key, "/since");
      // Months are counted on the calendar: 25,000 of them fit, one more does not.
      const months = (since: string) => `${prefix}/timeseries?interval=month&since=${since}&until=2100-01-01`;
      expect((await call("GET", months("0016-09-01"), { key: owner.key })).status).toBe(200);
      await expectInvalid(months("0016-08-01"), owner.key, "/since");
      const lastYearHourly = `${prefix}/timeseries?interval=hour&since=2025-01-01&until=2026-01-01`;
      expect((await call("GET", lastYearHourly, { key: owner.key })).status).toBe(200);
    }
  });

  test("ISO 8601 times: dates are 00:00 UTC, date-times need a zone, offsets are applied", () => {
    expect(parseIsoTime("2026-01-02")?.toISOString()).toBe("2026-01-02T00:00:00.000Z");
    // Finer than a millisecond rounds up: event times are stored to the millisecond.
    expect(parseIsoTime("2026-01-02T03:04:05.678901Z")?.toISOString()).toBe("2026-01-02T03:04:05.679Z");
    expect(parseIsoTime("2026-01-02T03:04:05.678000000Z")?.toISOString()).toBe("2026-01-02T03:04:05.678Z");
    expect(parseIsoTime("2026-01-02T03:04+02:00")?.toISOString()).toBe("2026-01-02T01:04:00.000Z");
    for (const bad of ["2026-1-2", "2026-01-02T03:04:05", "2026-13-01", "2026-01-02T24:00:00Z", "", "1700000000"]) {
      expect({ bad, parsed: parseIsoTime(bad) }).toEqual({ bad, parsed: undefined });
    }
  });
});

test("since and until finer than a millisecond select what they would at full precision", async () => {
  const owner = await createTestOrg();
  const domain = owner.domain as string;
  const at = new Date(Date.now() - 60_000);
  at.setUTCMilliseconds(0);
  const stamp = at.toISOString();
  const event = validEvents.retrieved(domain, { source_role: "edge", timestamp: stamp });
  expect((await call("POST", "/events", { key: owner.key, body: batch([event]) })).status).toBe(200);
  const eventsBetween = async (since: string, until: string) =>
    (await call("GET", `/content-owners/summary?since=${since}&until=${until}`, { key: owner.key })).body.total_events;
  const just = (micros: string) => stamp.replace(".000Z", `.${micros}Z`);
  expect(await eventsBetween(just("000"), just("000500"))).toBe(1);
  expect(await eventsBetween(just("000500"), just("500000"))).toBe(0);
  expect(await eventsBetween(just("000000"), just("000001"))).toBe(1);
});

test("url_contains narrows URL pages to a plain substring, ignoring case; % and _ match only themselves", async () => {
  const owner = await createTestOrg();
  const domain = owner.domain as string;
  const paths = ["/News/Election", "/news/weather", "/sport", "/100%_sure"];
  const events = paths.map((path) => validEvents.retrieved(domain, { content_url: `https://${domain}${path}` }));
  expect((await call("POST", "/events", { key: owner.key, body: batch(events) })).status).toBe(200);
  const matching = async (text: string) => {
    const page = await call("GET", `/content-owners/urls?url_contains=${encodeURIComponent(text)}`, { key: owner.key });
    expect(page.status).toBe(200);
    return {
      total: page.body.total,
      paths: page.body.items.map((item: { content_url: string }) => new URL(item.content_url).pathname).sort(),
    };
  };
  expect(await matching("NEWS/")).toEqual({ total: 2, paths: ["/News/Election", "/news/weather"] });
  expect(await matching("%_")).toEqual({ total: 1, paths: ["/100%_sure"] });
  expect(await matching("s_o")).toEqual({ total: 0, paths: [] });
  expect(await matching(domain.toUpperCase())).toMatchObject({ total: 4 });
});
