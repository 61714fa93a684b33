import { expect, test } from "bun:test";
import { runCompressionPolicies } from "../../src/db/maintenance.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { testRuntime } from "../support/runtime.ts";
import { ago, batch, validEvents } from "../support/telemetry-events.ts";
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
});
