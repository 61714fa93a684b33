import { expect, test } from "bun:test";
import { runCompressionPolicies } from "../../src/db/maintenance.ts";
import { flagMismatches, storedFlags } from "../support/first-flags.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { testRuntime } from "../support/runtime.ts";
import { ago, batch, sessionPoster, validEvents } from "../support/telemetry-events.ts";
import { storedEvents } from "../support/telemetry-store.ts";

test("old chunks are compressed by the policy and retries into them stay idempotent", async () => {
  const { ctx } = await testRuntime();
  const agent = await createTestOrg({ type: "agent" });
  const old = validEvents.retrieved("archive.example.net", { source_role: "origin", timestamp: ago(45 * 86_400) });
  const post = (events: unknown[]) => call("POST", "/events", { key: agent.key, body: batch(events) });
  expect((await post([old])).body.events_created).toBe(1);

  expect(await runCompressionPolicies(ctx.sql)).toBe(true);
  const [chunk] = await ctx.sql<{ is_compressed: boolean }[]>`
    SELECT c.is_compressed FROM timescaledb_information.chunks c
    WHERE c.hypertable_name = 'events' AND c.range_start <= ${old.timestamp}::timestamptz
      AND c.range_end > ${old.timestamp}::timestamptz`;
  expect(chunk?.is_compressed).toBe(true);

  const neighbour = validEvents.retrieved("archive.example.net", {
    source_role: "origin",
    timestamp: ago(45 * 86_400 - 60),
  });
  expect((await post([old, neighbour])).body.events_created).toBe(1);
  expect((await storedEvents(agent.id)).map((e) => e.event_id).sort()).toEqual([old.id, neighbour.id].sort());
  // The policy compresses every old chunk of the shared test database, other tests' too:
  // 2.4 s alone on the server, and past the default 5 s once beside a bulk load.
}, 30_000);

test("a late event takes its session's flags from an event in a compressed chunk", async () => {
  const { ctx } = await testRuntime();
  const agent = await createTestOrg({ type: "agent" });
  const sessionId = crypto.randomUUID();
  const post = sessionPoster(agent.key, sessionId);
  const stored = validEvents.retrieved("archive.example.net", { source_role: "agent", timestamp: ago(45 * 86_400) });
  expect((await post([stored])).body.events_created).toBe(1);
  expect(await runCompressionPolicies(ctx.sql)).toBe(true);

  const late = validEvents.retrieved("archive.example.net", { source_role: "agent", timestamp: ago(46 * 86_400) });
  const recent = validEvents.cited("archive.example.net", { source_role: "agent" });
  expect((await post([late, recent])).body.events_created).toBe(2);
  const flags = await storedFlags(ctx.sql, [agent.id]);
  expect(flagMismatches(flags)).toEqual([]);
  expect(flags.find((event) => event.event_id === late.id)?.first_in).toBe(127);
  expect(flags.find((event) => event.event_id === stored.id)?.first_in).toBe(0);
  // As above: the policy's run covers the whole shared test database.
}, 30_000);
