import { expect, test } from "bun:test";
import { hostsUnder } from "../../src/modules/reads/scope.ts";
import { testRuntime } from "../support/runtime.ts";

test("hosts under a domain: itself and every subdomain, never a look-alike", async () => {
  const { ctx } = await testRuntime();
  const base = `d${crypto.randomUUID().slice(0, 8)}.example`;
  const hosts = [base, `www.${base}`, `a.b.${base}`, `not${base}`, `${base}.evil.test`, `x-${base}`];
  await ctx.sql`INSERT INTO content_hosts (host) SELECT unnest(${hosts}::text[]) ON CONFLICT DO NOTHING`;
  expect((await hostsUnder(ctx.sql, [base])).sort()).toEqual([base, `a.b.${base}`, `www.${base}`].sort());
  expect(await hostsUnder(ctx.sql, [`www.${base}`])).toEqual([`www.${base}`]);
  expect(await hostsUnder(ctx.sql, [`zz.${base}`])).toEqual([]);
  // The range condition must be one the reversed-host index can serve (a tiny
  // test table may still be cheaper to scan, so sequential scans are ruled out here).
  const plan = await ctx.sql.begin(async (tx) => {
    await tx`SET LOCAL enable_seqscan = off`;
    return tx`EXPLAIN SELECT host FROM content_hosts WHERE reverse(host) COLLATE "C" >= ${"a"} AND reverse(host) COLLATE "C" < ${"b"}`;
  });
  expect(plan.map((row) => row["QUERY PLAN"]).join("\n")).toContain("content_hosts_reversed");
});
