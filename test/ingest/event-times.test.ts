import { expect, test } from "bun:test";
import { microseconds } from "../../src/modules/ingest/event-store.ts";
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
