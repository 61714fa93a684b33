import { expect, test } from "bun:test";
import { refreshAggregates, runCompressionPolicies } from "../../src/db/maintenance.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { testRuntime } from "../support/runtime.ts";
import { ago, batch, validEvents } from "../support/telemetry-events.ts";

// Compression and a refresh of every aggregate: seconds on a busy server (60 s allowed).
test("a late event written into a compressed chunk still moves its session's first time", async () => {
  const { ctx } = await testRuntime();
  const owner = await createTestOrg();
  const agent = await createTestOrg({ type: "agent" });
  const host = owner.domain as string;
  const sessionId = crypto.randomUUID();
  const day = 86_400;
  const report = (secondsAgo: number) =>
    call("POST", "/events", {
      key: agent.key,
      body: batch([validEvents.retrieved(host, { source_role: "agent", timestamp: ago(secondsAgo) })], {
        session_id: sessionId,
      }),
    });

  expect((await report(45 * day)).status).toBe(200);
  expect(await runCompressionPolicies(ctx.sql)).toBe(true);
  const [chunk] = await ctx.sql<{ is_compressed: boolean }[]>`
    SELECT c.is_compressed FROM timescaledb_information.chunks c
    WHERE c.hypertable_name = 'events' AND c.range_start <= ${ago(45 * day)}::timestamptz
      AND c.range_end > ${ago(45 * day)}::timestamptz`;
  expect(chunk?.is_compressed).toBe(true);

  // Two hours earlier, same chunk, same session: the session now starts there.
  expect((await report(45 * day + 7200)).status).toBe(200);
  await refreshAggregates(ctx.sql);
  const window = (fromSecondsAgo: number, toSecondsAgo: number) =>
    call("GET", `/content-owners/summary?since=${ago(fromSecondsAgo)}&until=${ago(toSecondsAgo)}`, { key: owner.key });
  const early = await window(45 * day + 7300, 45 * day + 7000);
  expect(early.body).toMatchObject({ total_events: 1, total_sessions: 1 });
  const later = await window(45 * day + 100, 45 * day - 100);
  expect(later.body).toMatchObject({ total_events: 1, total_sessions: 0 });
}, 60_000);
