import { describe, expect, test } from "bun:test";
import { IngestHealth } from "../../src/modules/ingest-health/service.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { whileRefusing } from "../support/refusing-trigger.ts";
import { testRuntime } from "../support/runtime.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";

const health = (key: string) => call("GET", "/api/v1/identity/ingest-health", { key });

/** A refused /events request of `orgId` that carried `events` events. */
const refusalOf = (orgId: string, detail: string, events: number) => ({
  orgId,
  path: "/events",
  status: 400,
  code: "validation_failed",
  detail,
  errors: [],
  events,
  requestId: undefined,
});

/**
 * A new organisation's flush of `accepted` events and one refusal, made while
 * `table` refuses that organisation's rows.
 */
async function flushedWhileRefusing(table: string, accepted: number, detail: string, events: number) {
  const { ctx } = await testRuntime();
  const org = await createTestOrg({ type: "platform" });
  const instance = new IngestHealth(ctx.sql, ctx.log);
  instance.accepted(org.id, accepted);
  instance.refused(refusalOf(org.id, detail, events));
  await whileRefusing(ctx.sql, { event: "INSERT", table, when: `NEW.org_id = '${org.id}'` }, () => instance.flush());
  return { org, instance };
}

describe("ingest health", () => {
  test("counts the events accepted and the requests refused this hour, and lists the refusals with their errors", async () => {
    const { ctx } = await testRuntime();
    const owner = await createTestOrg();
    const domain = owner.domain as string;
    const accepted = await call("POST", "/events", {
      key: owner.key,
      body: batch([validEvents.retrieved(domain), validEvents.retrieved(domain), validEvents.retrieved(domain)]),
    });
    expect(accepted.status).toBe(200);
    const invalid = await call("POST", "/events", {
      key: owner.key,
      body: batch([validEvents.retrieved(domain), validEvents.retrieved(domain, { source_role: "moon" })]),
    });
    expect(invalid.status).toBe(400);
    const malformed = await call("POST", "/events", {
      key: owner.key,
      body: "{not json",
      headers: { "content-type": "application/json" },
    });
    expect(malformed.status).toBe(400);
    await ctx.ingestHealth.flush();

    const seen = await health(owner.key);
    expect(seen.status).toBe(200);
    expect(seen.body.hours).toHaveLength(1);
    expect(seen.body.hours[0]).toMatchObject({ accepted_events: 3, refused_requests: 2, refused_events: 2 });
    expect(seen.body.refusals.map((r: { code: string }) => r.code)).toEqual([malformed.body.code, invalid.body.code]);
    const [newest, older] = seen.body.refusals;
    expect(newest).toMatchObject({ path: "/events", status: 400, events: 0, request_id: malformed.body.request_id });
    expect(older.errors).toEqual(invalid.body.errors);
    expect(older.events).toBe(2);

    const other = await createTestOrg();
    expect((await health(other.key)).body).toMatchObject({ hours: [], refusals: [] });
  });

  test("several instances add up; a flood keeps the newest 10 refusals per organisation per flush", async () => {
    const { ctx } = await testRuntime();
    const org = await createTestOrg({ type: "platform" });
    const instances = [new IngestHealth(ctx.sql, ctx.log), new IngestHealth(ctx.sql, ctx.log)];
    for (const [i, instance] of instances.entries()) {
      instance.accepted(org.id, 10 * (i + 1));
      for (let n = 0; n < 25; n++) {
        instance.refused({
          orgId: org.id,
          path: "/events",
          status: 400,
          code: "validation_failed",
          detail: `refusal ${i}-${n}`,
          errors: [],
          events: 1,
          requestId: undefined,
        });
      }
      await instance.flush();
    }
    const seen = await health(org.key);
    expect(seen.body.hours[0]).toMatchObject({ accepted_events: 30, refused_requests: 50, refused_events: 50 });
    expect(seen.body.refusals).toHaveLength(20);
    expect(seen.body.refusals[0].detail).toBe("refusal 1-24");
  });

  test("past the cap for all, the organisation holding most gives up its oldest: a quiet one keeps its refusal", async () => {
    const { ctx } = await testRuntime();
    const instance = new IngestHealth(ctx.sql, ctx.log);
    const quiet = await createTestOrg({ type: "platform" });
    instance.refused(refusalOf(quiet.id, "the quiet one", 1));
    // 21 organisations at their own cap of 10: 211 refusals for a cap of 200.
    const loud = await Promise.all(Array.from({ length: 21 }, () => createTestOrg({ type: "platform" })));
    for (const org of loud) for (let n = 0; n < 10; n++) instance.refused(refusalOf(org.id, `loud ${n}`, 1));
    await instance.flush();
    expect((await health(quiet.key)).body.refusals.map((r: { detail: string }) => r.detail)).toEqual(["the quiet one"]);
    const kept = await Promise.all(loud.map(async (org) => (await health(org.key)).body.refusals.length));
    expect(kept.reduce((sum, n) => sum + n, 0)).toBe(199);
    expect(Math.min(...kept)).toBeGreaterThanOrEqual(9);
  });

  test("a refused single-event document counts its one event", async () => {
    const { ctx } = await testRuntime();
    const owner = await createTestOrg();
    const refused = await call("POST", "/events", {
      key: owner.key,
      body: {
        document_type: "event",
        schema_version: "1.0",
        event: validEvents.retrieved(owner.domain as string, { source_role: "moon" }),
      },
    });
    expect(refused.status).toBe(400);
    await ctx.ingestHealth.flush();
    const seen = await health(owner.key);
    expect(seen.body.hours[0]).toMatchObject({ refused_requests: 1, refused_events: 1 });
    expect(seen.body.refusals[0].events).toBe(1);
  });

  test("a refusal quoting NUL characters and lone surrogates is stored cleaned, and blocks nothing after it", async () => {
    const { ctx } = await testRuntime();
    const org = await createTestOrg({ type: "platform" });
    const instance = new IngestHealth(ctx.sql, ctx.log);
    const hostile = "a\u0000b\ud800c";
    instance.refused({
      orgId: org.id,
      path: "/events",
      status: 400,
      code: "validation_failed",
      detail: hostile,
      errors: [{ path: "/events/0/agent_id", message: hostile }],
      events: 1,
      requestId: undefined,
    });
    await instance.flush();
    instance.accepted(org.id, 1);
    await instance.flush();
    const seen = await health(org.key);
    expect(seen.body.refusals[0]).toMatchObject({
      detail: "a\uFFFDb\uFFFDc",
      errors: [{ path: "/events/0/agent_id", message: "a\uFFFDb\uFFFDc" }],
    });
    expect(seen.body.hours[0]).toMatchObject({ accepted_events: 1, refused_requests: 1 });
  });

  test("refusals the database will not take are dropped, and the counts written with them are not written again", async () => {
    const { org, instance } = await flushedWhileRefusing("ingest_refusals", 5, "refused", 2);
    await instance.flush();
    const seen = await health(org.key);
    expect(seen.body.hours[0]).toMatchObject({ accepted_events: 5, refused_requests: 1, refused_events: 2 });
    expect(seen.body.refusals).toEqual([]);
  });

  test("when the counts cannot be written, counts and refusals both wait for the next flush", async () => {
    const { org, instance } = await flushedWhileRefusing("ingest_hours", 4, "kept through the outage", 1);
    expect((await health(org.key)).body).toMatchObject({ hours: [], refusals: [] });
    await instance.flush();
    const seen = await health(org.key);
    expect(seen.body.hours[0]).toMatchObject({ accepted_events: 4, refused_requests: 1, refused_events: 1 });
    expect(seen.body.refusals.map((r: { detail: string }) => r.detail)).toEqual(["kept through the outage"]);
  });

  test("a new process purges on its first flush: one restarted more often than hourly still purges", async () => {
    const { ctx } = await testRuntime();
    const org = await createTestOrg({ type: "platform" });
    await ctx.sql`
      INSERT INTO ingest_hours (org_id, hour, accepted_events) VALUES (${org.id}::uuid, now() - interval '91 days', 1)`;
    await new IngestHealth(ctx.sql, ctx.log).flush();
    expect(await ctx.sql`SELECT 1 FROM ingest_hours WHERE org_id = ${org.id}::uuid`).toHaveLength(0);
  });

  test("a refusal older than 7 days is not listed, even before the hourly purge removes it", async () => {
    const { ctx } = await testRuntime();
    const org = await createTestOrg({ type: "platform" });
    const ages: [detail: string, age: string][] = [
      ["just past", "7 days 1 minute"],
      ["just within", "6 days 23 hours"],
    ];
    for (const [detail, age] of ages) {
      await ctx.sql`
        INSERT INTO ingest_refusals (org_id, received_at, path, status, code, detail, errors, events)
        VALUES (${org.id}::uuid, now() - ${age}::interval, '/events', 400, 'validation_failed', ${detail}, '[]', 1)`;
    }
    const seen = await health(org.key);
    expect(seen.body.refusals.map((r: { detail: string }) => r.detail)).toEqual(["just within"]);
  });

  test("a key without identity:read is refused: 403 missing_scope", async () => {
    const org = await createTestOrg({ type: "platform" });
    const writeOnly = await org.keyWith(["telemetry:write"]);
    const refused = await health(writeOnly);
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 403, code: "missing_scope" });
  });
});
