import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { testRuntime } from "../support/runtime.ts";

// postgres.js writes a statement's parameters into one Bind message, sized once
// from their UTF-8 lengths, with the Execute behind it in the same buffer
// (patches/postgres@3.4.9.patch). An ingest write's column arrays make that
// message hundreds of kilobytes. Every byte must arrive where it was sent.

const md5 = (text: string) => createHash("md5").update(text, "utf8").digest("hex");

/** Values of several UTF-8 widths (1 to 4 bytes a character), so a length counted in characters is wrong. */
const widths = ["ascii", "ünïcödé", "✓ check", "𝄞 clef"];

test("a statement's parameters of megabytes, in characters of every UTF-8 width, arrive byte for byte", async () => {
  const { ctx } = await testRuntime();
  const urls = Array.from({ length: 20_000 }, (_, i) => `https://${widths[i % 4]}.example/${i}/${"x".repeat(i % 50)}`);
  const single = widths.join("|").repeat(50_000);
  const [row] = await ctx.sql<{ urls: string; single: string; gap: null; after: string }[]>`
    SELECT md5(array_to_string(${urls}::text[], ',')) AS urls, md5(${single}::text) AS single,
           ${null}::text AS gap, ${"after"}::text AS after`;
  expect(row).toEqual({ urls: md5(urls.join(",")), single: md5(single), gap: null, after: "after" });
});

test("a cursor's statement, whose Execute (rows a few at a time) follows its Bind in the same buffer, reads every row", async () => {
  const { ctx } = await testRuntime();
  const labels = Array.from({ length: 5_000 }, (_, i) => `${widths[i % 4]}-${i}`);
  const read: string[] = [];
  const batches: number[] = [];
  await ctx.sql<{ label: string }[]>`
    SELECT label FROM unnest(${labels}::text[]) WITH ORDINALITY AS u (label, n) ORDER BY n`.cursor(700, (rows) => {
    batches.push(rows.length);
    read.push(...rows.map((row) => row.label));
  });
  expect(read).toEqual(labels);
  // The cursor's own Execute asks for 700 rows at a time; the plain one would ask for all.
  expect(batches).toEqual([700, 700, 700, 700, 700, 700, 700, 100]);
});
