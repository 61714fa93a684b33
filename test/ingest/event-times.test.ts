import { expect, test } from "bun:test";
import { microseconds } from "../../src/modules/ingest/event-times.ts";
import { insertEvents } from "../support/events.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { testRuntime } from "../support/runtime.ts";

test("event times in microseconds match what PostgreSQL stores, rounding included", async () => {
  const { sql } = (await testRuntime()).ctx;
  const fractions = [
    "",
    ".5",
    ".123456",
    ".1234565",
    ".1234575",
    ".0000005",
    ".0000015",
    ".9999995",
    ".99999949",
    ".12345650001",
    ...Array.from({ length: 200 }, () => `.${String(Math.floor(Math.random() * 1e9)).padStart(9, "0")}`),
  ];
  const texts = fractions.flatMap((fraction) => [
    `2026-03-04T05:06:07${fraction}Z`,
    `2001-12-31T23:59:59${fraction}+02:00`,
  ]);
  const stored = await sql<{ us: string }[]>`
    SELECT (extract(epoch FROM t::timestamptz) * 1000000)::bigint AS us FROM unnest(${texts}::text[]) WITH ORDINALITY AS x (t, i) ORDER BY i`;
  expect(texts.map((text) => microseconds(text))).toEqual(stored.map((row) => Number(row.us)));
});

test("an event time given to the microsecond is stored and counted to the microsecond", async () => {
  const { sql } = (await testRuntime()).ctx;
  const reporter = await createTestOrg({ type: "platform" });
  const sessionId = crypto.randomUUID();
  const [later, earlier] = ["2026-03-04T05:06:07.123457Z", "2026-03-04T05:06:07.123456Z"];
  // The later event first: the earlier one, a microsecond before it, must take its flags.
  for (const time of [later, earlier]) {
    await insertEvents(sql, [
      { event_time: time, org_id: reporter.id, session_id: sessionId, content_url: "https://us.example/p" },
    ]);
  }
  const stored = await sql<{ us: string; first_in: number }[]>`
    SELECT (extract(epoch FROM event_time) * 1000000)::bigint AS us, first_in
    FROM events WHERE session_id = ${sessionId}::uuid ORDER BY event_time`;
  expect(stored.map((row) => Number(row.us))).toEqual([microseconds(earlier), microseconds(later)]);
  expect(stored.map((row) => row.first_in !== 0)).toEqual([true, false]);
});
