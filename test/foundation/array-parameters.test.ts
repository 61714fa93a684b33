import { expect, test } from "bun:test";
import { testRuntime } from "../support/runtime.ts";

// Ingest sends each column of a batch as one array parameter (event-columns.ts).
// postgres.js serializes arrays as PostgreSQL array literals, escaping only the
// values that need it (patches/postgres@3.4.9.patch); every value must still
// arrive exactly as sent.

const awkward = [
  'a "quoted" word',
  "back\\slash",
  '\\"both\\"',
  "comma, and {braces}",
  "",
  "NULL",
  " spaced ",
  "ünïcödé ✓",
  null,
  "https://news.example.com/a?b=c&d=e#f",
];

test("text array parameters arrive exactly as sent, escaped or not", async () => {
  const { ctx } = await testRuntime();
  // Read back as JSON: postgres.js parses a text array's NULL element as the string "NULL".
  const [row] = await ctx.sql<{ values: (string | null)[] }[]>`SELECT array_to_json(${awkward}::text[]) AS values`;
  expect(row?.values).toEqual(awkward);
});

test("json text with quotes and backslashes survives the trip into jsonb, element by element", async () => {
  const { ctx } = await testRuntime();
  const documents = [{ quote: 'say "hi"', path: "C:\\dir\\file" }, { nested: { list: ["a,b", "{c}"] } }];
  const [row] = await ctx.sql<{ parsed: unknown[] }[]>`
    SELECT array_agg(x::jsonb ORDER BY n) AS parsed
    FROM unnest(${documents.map((document) => JSON.stringify(document))}::text[]) WITH ORDINALITY AS u (x, n)`;
  expect(row?.parsed).toEqual(documents);
});
