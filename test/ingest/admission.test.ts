import { describe, expect, test } from "bun:test";
import { createApp } from "../../src/app.ts";
import { ProblemError } from "../../src/core/problem.ts";
import { AdmissionGate } from "../../src/http/admission.ts";
import { buildContext } from "../../src/runtime.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { callApp } from "../support/http.ts";
import { rejectionOf } from "../support/rejection.ts";
import { testRuntime } from "../support/runtime.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";
import { storedEvents } from "../support/telemetry-store.ts";

/** Work that finishes when the test says so. */
function heldWork() {
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return { run: () => done, finish };
}

describe("ingest admission", () => {
  test("admits up to its concurrency, queues up to its queue, refuses the rest at once", async () => {
    const gate = new AdmissionGate(2, 1, 10_000);
    const held = heldWork();
    const running = [gate.run(held.run), gate.run(held.run)];
    const queued = gate.run(async () => "queued ran");
    const refused = await rejectionOf(gate.run(async () => "never"));
    expect(refused).toBeInstanceOf(ProblemError);
    expect((refused as ProblemError).code).toBe("ingest_overloaded");
    expect((refused as ProblemError).headers["retry-after"]).toBe("1");
    held.finish();
    await Promise.all(running);
    expect(await queued).toBe("queued ran");
    // Every slot came back: the gate admits again.
    expect(await gate.run(async () => "after")).toBe("after");
  });

  test("a request that waits longer than the limit is refused, and leaves its place", async () => {
    const gate = new AdmissionGate(1, 5, 50);
    const held = heldWork();
    const running = gate.run(held.run);
    const waited = await rejectionOf(gate.run(async () => "too late"));
    expect((waited as ProblemError).code).toBe("ingest_overloaded");
    held.finish();
    await running;
    expect(await gate.run(async () => "next")).toBe("next");
  });

  test("over HTTP, a shed batch is a 503 with Retry-After and stores nothing", async () => {
    const { ctx, db } = await testRuntime();
    const config = { ...ctx.config, INGEST_CONCURRENCY: 1, INGEST_QUEUE: 0 };
    const app = createApp(buildContext(config, ctx.log, db));
    const agent = await createTestOrg({ type: "agent" });
    const bodies = Array.from({ length: 6 }, () =>
      batch([validEvents.retrieved("shed.example.org", { source_role: "origin" })]),
    );
    const answers = await Promise.all(bodies.map((body) => callApp(app, "POST", "/events", { key: agent.key, body })));
    const shed = answers.filter((answer) => answer.status === 503);
    expect(shed.length).toBeGreaterThan(0);
    for (const answer of shed) {
      expect(answer.body.code).toBe("ingest_overloaded");
      expect(answer.headers.get("retry-after")).toBe("1");
    }
    const accepted = answers.filter((answer) => answer.status === 200).length;
    expect(accepted + shed.length).toBe(bodies.length);
    expect(await storedEvents(agent.id)).toHaveLength(accepted);
  });

  test("while the gate is full, a batch is refused before its body is read; other routes read theirs", async () => {
    const { ctx, db } = await testRuntime();
    const shedding = buildContext({ ...ctx.config, INGEST_CONCURRENCY: 1, INGEST_QUEUE: 0 }, ctx.log, db);
    const app = createApp(shedding);
    const agent = await createTestOrg({ type: "agent" });
    // Not JSON: read, it is a 400; refused unread, a 503.
    const unreadable = "{not json";
    const held = heldWork();
    const holding = shedding.ingestGate.run(held.run);
    try {
      const shed = await callApp(app, "POST", "/events", { key: agent.key, body: unreadable });
      expect([shed.status, shed.body.code, shed.headers.get("retry-after")]).toEqual([503, "ingest_overloaded", "1"]);
      const ended = await callApp(app, "POST", "/sessions/end", { key: agent.key, body: unreadable });
      expect([ended.status, ended.body.code]).toEqual([503, "ingest_overloaded"]);
      // The credential is still checked first, and a route outside the gate reads its body.
      const anonymous = await callApp(app, "POST", "/events", { body: unreadable });
      expect(anonymous.status).toBe(401);
      const minted = await callApp(app, "POST", "/click-tokens", { key: agent.key, body: unreadable });
      expect([minted.status, minted.body.code]).toEqual([400, "malformed_json"]);
      // Ingest health counts a batch refused unread without its events, which were never parsed.
      const unread = batch([validEvents.retrieved("shed.example.org", { source_role: "origin" })]);
      expect((await callApp(app, "POST", "/events", { key: agent.key, body: unread })).status).toBe(503);
    } finally {
      held.finish();
      await holding;
    }
    const read = await callApp(app, "POST", "/events", { key: agent.key, body: unreadable });
    expect([read.status, read.body.code]).toEqual([400, "malformed_json"]);
    await shedding.ingestHealth.flush();
    const health = await callApp(app, "GET", "/api/v1/identity/ingest-health", { key: agent.key });
    // Five refusals, newest first: the two 400s read their bodies, the three 503s did not.
    expect(health.body.hours[0]).toMatchObject({ accepted_events: 0, refused_requests: 5, refused_events: 0 });
    expect(
      health.body.refusals.map((r: { path: string; status: number; events: number }) => [r.path, r.status, r.events]),
    ).toEqual([
      ["/events", 400, 0],
      ["/events", 503, 0],
      ["/click-tokens", 400, 0],
      ["/sessions/end", 503, 0],
      ["/events", 503, 0],
    ]);
  });
});
