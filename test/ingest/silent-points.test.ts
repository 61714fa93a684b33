import { describe, expect, test } from "bun:test";
import type { Principal } from "../../src/core/caller.ts";
import type { ProblemError } from "../../src/core/problem.ts";
import { ingestDocument } from "../../src/modules/ingest/pipeline.ts";
import { expectAccepted, expectRefused, sessionDocument, site } from "../support/conformance.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { rejectionOf } from "../support/rejection.ts";
import { testRuntime } from "../support/runtime.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";
import { storedEvents, storedSession } from "../support/telemetry-store.ts";

const days = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();
const inBatch = (event: Record<string, unknown>) => batch([event], { session_id: crypto.randomUUID() });

// Points the standard leaves open (standard-notes.md), decided in README "Ingest".
describe("events against an ended session", () => {
  test("are accepted and stored, and the session's end is kept", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const started = await call("POST", "/sessions/start", { key: agent.key, body: {} });
    const sessionId = started.body.session_id;
    const ended = await call("POST", "/sessions/end", { key: agent.key, body: { session_id: sessionId } });
    const late = validEvents.engaged(site, { timestamp: new Date(Date.now() + 1000).toISOString() });
    const res = await call("POST", "/events", { key: agent.key, body: batch([late], { session_id: sessionId }) });
    expect(res.body).toEqual({ status: "ok", events_created: 1 });
    expect(await storedEvents(agent.id)).toHaveLength(1);
    expect((await storedSession(sessionId))?.ended_at.toISOString()).toBe(ended.body.ended_at);
  });
});

describe("the event-age window", () => {
  test("by default: at most 3650 days old and 300 seconds ahead", async () => {
    await expectAccepted(inBatch(validEvents.grounded(site, { timestamp: days(3649) })));
    await expectRefused(
      inBatch(validEvents.grounded(site, { timestamp: days(3651) })),
      "/events/0/timestamp",
      "3650 days",
    );
    const ahead = new Date(Date.now() + 301_000).toISOString();
    await expectRefused(
      inBatch(validEvents.grounded(site, { timestamp: ahead })),
      "/events/0/timestamp",
      "300 seconds",
    );
    await expectAccepted(
      inBatch(validEvents.grounded(site, { timestamp: new Date(Date.now() + 200_000).toISOString() })),
    );
  });

  test("its limits come from configuration (EVENT_MAX_AGE_DAYS, EVENT_MAX_FUTURE_SECONDS)", async () => {
    const org = await createTestOrg({ type: "agent" });
    const principal: Principal = {
      keyId: "test",
      orgId: org.id,
      orgType: "agent",
      scopes: new Set(["telemetry:write"]),
      verifiedDomains: [],
    };
    const { ctx } = await testRuntime();
    const narrow = { maxAgeDays: 2, maxFutureSeconds: 0 };
    const write = (timestamp: string) =>
      ingestDocument(ctx.ingestWriter, principal, inBatch(validEvents.grounded(site, { timestamp })), "events", narrow);
    expect((await write(days(1))).eventsCreated).toBe(1);
    const old = (await rejectionOf(write(days(3)))) as ProblemError;
    expect(old.extensions.errors).toEqual([
      { path: "/events/0/timestamp", message: "is more than 2 days old (EVENT_MAX_AGE_DAYS)" },
    ]);
    const ahead = (await rejectionOf(write(new Date(Date.now() + 5000).toISOString()))) as ProblemError;
    expect(ahead.extensions.errors).toEqual([
      { path: "/events/0/timestamp", message: "is more than 0 seconds in the future (EVENT_MAX_FUTURE_SECONDS)" },
    ]);
  });

  test("session start and end times meet the same window", async () => {
    await expectRefused(sessionDocument([], { started_at: days(4000) }), "/started_at", "days old");
  });
});
