import { afterEach, describe, expect, test } from "bun:test";
import { enqueueEvent, type IdentityEventType } from "../../src/modules/outbox/service.ts";
import { claimDue, purgeWebhookHistory } from "../../src/modules/webhooks/queue.ts";
import { createTestOrg, type TestOrg } from "../support/fixtures.ts";
import { buildIdentityApp, callIdentity, memberOf } from "../support/identity.ts";
import { testRuntime } from "../support/runtime.ts";
import {
  startReceiver,
  type TestReceiver,
  testClock,
  testSender,
  testSweeper,
  undocumentedData,
} from "../support/webhooks.ts";

const path = "/api/v1/identity/webhooks";
const { app } = await buildIdentityApp({ WEBHOOK_ALLOW_LOOPBACK: true });
const receivers: TestReceiver[] = [];
afterEach(() => {
  for (const receiver of receivers.splice(0)) receiver.stop();
});

function receiver(): TestReceiver {
  const started = startReceiver();
  receivers.push(started);
  return started;
}

/** The signature computed here with WebCrypto, independently of the service's node:crypto code. */
async function expectedSignature(secret: string, timestamp: string, body: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${timestamp}.${body}`));
  return Buffer.from(mac).toString("hex");
}

async function createEndpoint(org: TestOrg, url: string, eventTypes: IdentityEventType[]) {
  const key = await org.keyWith(["identity:read", "identity:write"]);
  const res = await callIdentity("POST", path, { app, key, body: { url, event_types: eventTypes } });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id as string, secret: res.body.secret as string, key };
}

async function deliveriesOf(endpoint: { id: string; key: string }) {
  const res = await callIdentity("GET", `${path}/${endpoint.id}/deliveries`, { app, key: endpoint.key });
  expect(res.status).toBe(200);
  return res.body.items as any[];
}

async function emit(orgId: string, type: IdentityEventType, data: Record<string, unknown>) {
  const { ctx } = await testRuntime();
  return enqueueEvent(ctx.sql, { orgId, type, data });
}

const minute = 60_000;

describe("delivery", () => {
  test("an outbox event goes to each subscribed endpoint of its organisation, as a signed envelope", async () => {
    const hooks = receiver();
    const org = await createTestOrg({ type: "platform" });
    const other = await createTestOrg({ type: "platform" });
    const first = await createEndpoint(org, hooks.url("/first"), ["delegation.created"]);
    const second = await createEndpoint(org, hooks.url("/second"), ["invite.claimed", "delegation.created"]);
    await createEndpoint(org, hooks.url("/not-subscribed"), ["invite.claimed"]);
    await createEndpoint(other, hooks.url("/other-org"), ["delegation.created"]);
    const data = {
      delegation: {
        id: crypto.randomUUID(),
        grantor_org_id: crypto.randomUUID(),
        grantee_org_id: org.id,
        scopes: ["telemetry:read"],
      },
    };
    const eventId = await emit(org.id, "delegation.created", data);
    const clock = testClock();
    const sweeper = await testSweeper({ clock: clock.now });
    await sweeper.sweep();

    const got = hooks.received.filter((r) => r.headers["x-svc-event-type"] === "delegation.created");
    expect(got.map((r) => r.path).sort()).toEqual(["/first", "/second"]);
    const timestamp = String(Math.floor(clock.now().getTime() / 1000));
    for (const [request, endpoint] of [
      [got.find((r) => r.path === "/first"), first],
      [got.find((r) => r.path === "/second"), second],
    ] as const) {
      const headers = request?.headers ?? {};
      const body = request?.body ?? "";
      expect(headers["content-type"]).toBe("application/json");
      expect(headers["x-svc-timestamp"]).toBe(timestamp);
      expect(headers["x-svc-signature"]).toBe(await expectedSignature(endpoint.secret, timestamp, body));
      const [delivery] = await deliveriesOf(endpoint);
      expect(headers["x-svc-delivery-id"]).toBe(delivery.id);
      expect(Object.keys(JSON.parse(body))).toEqual(["id", "type", "created_at", "data"]);
      const envelope = JSON.parse(body);
      expect(envelope).toEqual({ id: eventId, type: "delegation.created", created_at: expect.any(String), data });
      expect(undocumentedData(envelope.type, envelope.data)).toEqual([]);
      expect(new Date(envelope.created_at).toISOString()).toBe(envelope.created_at);
      expect(delivery).toMatchObject({
        event_id: eventId,
        event_type: "delegation.created",
        status: "delivered",
        attempt_count: 1,
        next_attempt_at: null,
        last_status_code: 200,
        last_error: null,
        data,
      });
      expect(delivery.attempts).toEqual([
        {
          attempted_at: clock.now().toISOString(),
          succeeded: true,
          status_code: 200,
          latency_ms: expect.any(Number),
          error: null,
          response_sample: "ok",
        },
      ]);
    }
    const endpoint = await callIdentity("GET", `${path}/${first.id}`, { app, key: first.key });
    expect(endpoint.body).toMatchObject({ last_success_at: clock.now().toISOString(), failing_since: null });

    // Nothing is sent twice, and an endpoint created after the event does not get it.
    await createEndpoint(org, hooks.url("/late"), ["delegation.created"]);
    const count = hooks.received.length;
    clock.advance(minute);
    await sweeper.sweep();
    expect(hooks.received.length).toBe(count);
  });

  test("failures retry after 1m, 5m, 30m, 2h, 12h, 12h, 12h; the 8th failure dead-letters", async () => {
    const hooks = receiver();
    hooks.on("/down", () => new Response("nope", { status: 500 }));
    const org = await createTestOrg();
    const endpoint = await createEndpoint(org, hooks.url("/down"), ["delegation_request.created"]);
    await emit(org.id, "delegation_request.created", { delegation_request: { id: crypto.randomUUID() } });
    const clock = testClock();
    const sweeper = await testSweeper({ clock: clock.now });
    const start = clock.now().getTime();
    // The schedule as the spec states it, in seconds after each failed attempt.
    const delays = [60, 300, 1800, 7200, 43200, 43200, 43200];
    const attemptTimes = [start];
    for (const delay of delays) attemptTimes.push((attemptTimes.at(-1) as number) + delay * 1000);

    for (const [index, at] of attemptTimes.entries()) {
      if (index > 0) {
        clock.set(new Date(at - 1));
        await sweeper.sweep();
        expect(hooks.received.length).toBe(index);
      }
      clock.set(new Date(at));
      await sweeper.sweep();
      expect(hooks.received.length).toBe(index + 1);
      const [delivery] = await deliveriesOf(endpoint);
      const last = index === attemptTimes.length - 1;
      expect(delivery).toMatchObject({
        status: last ? "dead" : "pending",
        attempt_count: index + 1,
        next_attempt_at: last ? null : new Date(attemptTimes[index + 1] as number).toISOString(),
        last_status_code: 500,
        last_error: "status 500",
      });
      const request = hooks.received[index];
      const timestamp = String(Math.floor(at / 1000));
      expect(request?.headers["x-svc-delivery-id"]).toBe(delivery.id);
      expect(request?.headers["x-svc-timestamp"]).toBe(timestamp);
      expect(request?.headers["x-svc-signature"]).toBe(
        await expectedSignature(endpoint.secret, timestamp, request?.body ?? ""),
      );
    }
    const [dead] = await deliveriesOf(endpoint);
    expect(dead.attempts.map((a: any) => [a.attempted_at, a.status_code, a.error, a.response_sample])).toEqual(
      attemptTimes.map((at) => [new Date(at).toISOString(), 500, "status 500", "nope"]).reverse(),
    );
    expect(new Set(hooks.received.map((r) => r.body)).size).toBe(1);
    const dlq = await callIdentity("GET", `${path}/${endpoint.id}/deliveries?status=dead`, { app, key: endpoint.key });
    expect(dlq.body.items.map((d: any) => d.id)).toEqual([dead.id]);
    expect(
      (await callIdentity("GET", `${path}/${endpoint.id}/deliveries?status=pending`, { app, key: endpoint.key })).body
        .total,
    ).toBe(0);
    // Dead: nothing more is sent, however late.
    clock.advance(30 * 24 * 60 * minute);
    await sweeper.sweep();
    expect(hooks.received.length).toBe(8);
  });

  test("a redirect is a failed attempt and is never followed; the response sample is capped at 1 KiB", async () => {
    const hooks = receiver();
    hooks.on("/moved", () => new Response(null, { status: 302, headers: { location: hooks.url("/target") } }));
    hooks.on("/huge", () => new Response("x".repeat(5_000_000), { status: 400 }));
    const org = await createTestOrg();
    const moved = await createEndpoint(org, hooks.url("/moved"), ["invite.claimed"]);
    const huge = await createEndpoint(org, hooks.url("/huge"), ["invite.claimed"]);
    await emit(org.id, "invite.claimed", { invite: { id: crypto.randomUUID() } });
    await (await testSweeper({ clock: testClock().now })).sweep();
    expect(hooks.received.map((r) => r.path).sort()).toEqual(["/huge", "/moved"]);
    const [redirected] = await deliveriesOf(moved);
    expect(redirected).toMatchObject({
      status: "pending",
      last_status_code: 302,
      last_error: "redirect (302) not followed",
    });
    const [big] = await deliveriesOf(huge);
    expect(big.attempts[0]).toMatchObject({ succeeded: false, status_code: 400, error: "status 400" });
    expect(big.attempts[0].response_sample).toBe("x".repeat(1024));
  });

  test("ping sends a signed test event on demand; redeliver sends a delivery again with the same id", async () => {
    const hooks = receiver();
    const org = await createTestOrg();
    const endpoint = await createEndpoint(org, hooks.url("/ping"), ["delegation.revoked"]);
    const pinged = await callIdentity("POST", `${path}/${endpoint.id}/ping`, { app, key: endpoint.key });
    expect(pinged.status).toBe(202);
    expect(pinged.body).toMatchObject({ event_type: "ping", status: "pending", attempt_count: 0, attempts: [] });
    const clock = testClock();
    const sweeper = await testSweeper({ clock: clock.now });
    await sweeper.sweep();
    expect(hooks.received.length).toBe(1);
    const [request] = hooks.received;
    expect(request?.headers["x-svc-event-type"]).toBe("ping");
    expect(request?.headers["x-svc-delivery-id"]).toBe(pinged.body.id);
    expect(JSON.parse(request?.body ?? "")).toMatchObject({
      id: pinged.body.event_id,
      type: "ping",
      data: { webhook_id: endpoint.id },
    });
    expect(undocumentedData("ping", JSON.parse(request?.body ?? "").data)).toEqual([]);
    const timestamp = request?.headers["x-svc-timestamp"] ?? "";
    expect(request?.headers["x-svc-signature"]).toBe(
      await expectedSignature(endpoint.secret, timestamp, request?.body ?? ""),
    );

    const again = await callIdentity("POST", `${path}/${endpoint.id}/deliveries/${pinged.body.id}/redeliver`, {
      app,
      key: endpoint.key,
    });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ id: pinged.body.id, status: "pending", attempt_count: 0, delivered_at: null });
    expect(again.body.attempts.length).toBe(1);
    clock.advance(1000);
    await sweeper.sweep();
    expect(hooks.received.length).toBe(2);
    expect(hooks.received[1]?.headers["x-svc-delivery-id"]).toBe(pinged.body.id);
    expect(hooks.received[1]?.body).toBe(request?.body);
    const one = await callIdentity("GET", `${path}/${endpoint.id}/deliveries/${pinged.body.id}`, {
      app,
      key: endpoint.key,
    });
    expect(one.body).toMatchObject({ status: "delivered", attempt_count: 1 });
    expect(one.body.attempts.length).toBe(2);
  });

  test("a delivery being sent cannot be redelivered at the same time (409 delivery_in_flight)", async () => {
    const { ctx } = await testRuntime();
    const hooks = receiver();
    const org = await createTestOrg();
    const endpoint = await createEndpoint(org, hooks.url("/x"), ["invite.claimed"]);
    const pinged = await callIdentity("POST", `${path}/${endpoint.id}/ping`, { app, key: endpoint.key });
    await ctx.sql`
      UPDATE webhook_deliveries SET leased_until = now() + interval '1 minute', lease_id = gen_random_uuid()
      WHERE id = ${pinged.body.id}::uuid`;
    const res = await callIdentity("POST", `${path}/${endpoint.id}/deliveries/${pinged.body.id}/redeliver`, {
      app,
      key: endpoint.key,
    });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("delivery_in_flight");
  });

  test("a delivery in flight when its endpoint is deleted, and received, is recorded delivered, not dropped", async () => {
    const hooks = receiver();
    let answer: () => void = () => {};
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    hooks.on("/slow", async () => {
      await answered;
      return new Response("ok");
    });
    const org = await createTestOrg();
    const endpoint = await createEndpoint(org, hooks.url("/slow"), ["invite.claimed"]);
    const pinged = await callIdentity("POST", `${path}/${endpoint.id}/ping`, { app, key: endpoint.key });
    const sweeper = await testSweeper({ clock: testClock().now });
    const sweeping = sweeper.sweep();
    while (hooks.received.length === 0) await Bun.sleep(10);
    expect((await callIdentity("DELETE", `${path}/${endpoint.id}`, { app, key: endpoint.key })).status).toBe(204);
    answer();
    await sweeping;
    const [delivery] = await deliveriesOf(endpoint);
    expect(delivery).toMatchObject({ id: pinged.body.id, status: "delivered", last_status_code: 200 });
  });

  test("a delivery in flight when its endpoint is disabled for failing cannot be redelivered until its attempt ends", async () => {
    const { ctx } = await testRuntime();
    const hooks = receiver();
    const gates = [Promise.withResolvers<void>(), Promise.withResolvers<void>()];
    let requests = 0;
    hooks.on("/gated", async () => {
      const gate = gates[requests++];
      await gate?.promise;
      return new Response(gate === gates[0] ? "ok" : "down", { status: gate === gates[0] ? 200 : 500 });
    });
    const org = await createTestOrg();
    const endpoint = await createEndpoint(org, hooks.url("/gated"), ["invite.claimed"]);
    const first = await callIdentity("POST", `${path}/${endpoint.id}/ping`, { app, key: endpoint.key });
    await callIdentity("POST", `${path}/${endpoint.id}/ping`, { app, key: endpoint.key });
    const clock = testClock();
    const sending = (await testSweeper({ clock: clock.now, concurrency: 1 })).sweep();
    while (hooks.received.length < 1) await Bun.sleep(10);
    const failing = (await testSweeper({ clock: clock.now, concurrency: 1 })).sweep();
    while (hooks.received.length < 2) await Bun.sleep(10);
    // The second attempt fails on an endpoint failing for 6 days: the sweep disables it.
    await ctx.sql`
      UPDATE webhook_endpoints SET failing_since = now() - interval '6 days', last_failure_at = now()
      WHERE id = ${endpoint.id}::uuid`;
    gates[1]?.resolve();
    expect((await failing).endpoints_disabled).toBe(1);
    const enabled = await callIdentity("POST", `${path}/${endpoint.id}/enable`, { app, key: endpoint.key });
    expect(enabled.body.status).toBe("active");

    const redeliver = () =>
      callIdentity("POST", `${path}/${endpoint.id}/deliveries/${first.body.id}/redeliver`, { app, key: endpoint.key });
    const early = await redeliver();
    expect([early.status, early.body.code]).toEqual([409, "delivery_in_flight"]);
    gates[0]?.resolve();
    await sending;
    const [delivered] = (await deliveriesOf(endpoint)).filter((delivery) => delivery.id === first.body.id);
    expect(delivered).toMatchObject({ status: "delivered", attempt_count: 1, last_status_code: 200 });
    expect((await redeliver()).body).toMatchObject({ status: "pending", attempt_count: 0 });
    expect(hooks.received).toHaveLength(2);
  });

  test("a delivery in flight when its endpoint is deleted, and not received, stays dropped with its attempt counted", async () => {
    const hooks = receiver();
    const answered = Promise.withResolvers<void>();
    hooks.on("/failing", async () => {
      await answered.promise;
      return new Response("down", { status: 503 });
    });
    const org = await createTestOrg();
    const endpoint = await createEndpoint(org, hooks.url("/failing"), ["invite.claimed"]);
    const pinged = await callIdentity("POST", `${path}/${endpoint.id}/ping`, { app, key: endpoint.key });
    const sweeping = (await testSweeper({ clock: testClock().now })).sweep();
    while (hooks.received.length === 0) await Bun.sleep(10);
    expect((await callIdentity("DELETE", `${path}/${endpoint.id}`, { app, key: endpoint.key })).status).toBe(204);
    answered.resolve();
    await sweeping;
    const [delivery] = await deliveriesOf(endpoint);
    expect(delivery).toMatchObject({ id: pinged.body.id, status: "dropped", attempt_count: 1, last_status_code: 503 });
    expect(delivery.next_attempt_at).toBeNull();
  });

  test("during a secret rotation's overlap the old secret's signature travels beside the new one's; after it, only the new one", async () => {
    const hooks = receiver();
    const org = await createTestOrg();
    const endpoint = await createEndpoint(org, hooks.url("/rotating"), ["invite.claimed"]);
    const rotated = await callIdentity("POST", `${path}/${endpoint.id}/rotate-secret`, { app, key: endpoint.key });
    const expires = Date.parse(rotated.body.previous_secret_expires_at);
    const clock = testClock();
    const sweeper = await testSweeper({ clock: clock.now });
    await callIdentity("POST", `${path}/${endpoint.id}/ping`, { app, key: endpoint.key });
    await sweeper.sweep();
    const during = hooks.received[0];
    const ts = during?.headers["x-svc-timestamp"] ?? "";
    // X-Svc-Signature stays the one hex signature the interface names, the current secret's.
    expect(during?.headers["x-svc-signature"]).toBe(
      await expectedSignature(rotated.body.secret, ts, during?.body ?? ""),
    );
    expect(during?.headers["x-svc-signature-previous"]).toBe(
      await expectedSignature(endpoint.secret, ts, during?.body ?? ""),
    );
    await callIdentity("POST", `${path}/${endpoint.id}/ping`, { app, key: endpoint.key });
    clock.set(new Date(expires + 1000));
    await sweeper.sweep();
    const after = hooks.received[1];
    const ts2 = after?.headers["x-svc-timestamp"] ?? "";
    expect(after?.headers["x-svc-signature"]).toBe(
      await expectedSignature(rotated.body.secret, ts2, after?.body ?? ""),
    );
    expect(after?.headers["x-svc-signature-previous"]).toBeUndefined();
  });

  test("an endpoint whose every attempt has failed for 5 days is disabled, visibly, and its backlog dropped", async () => {
    const hooks = receiver();
    let healthy = false;
    hooks.on("/flaky", () => new Response(healthy ? "fine" : "broken", { status: healthy ? 200 : 503 }));
    const org = await createTestOrg();
    const endpoint = await createEndpoint(org, hooks.url("/flaky"), ["invite.claimed"]);
    const clock = testClock();
    const sweeper = await testSweeper({ clock: clock.now });
    const t0 = clock.now().getTime();
    await emit(org.id, "invite.claimed", { n: 1 });
    await sweeper.sweep();
    let state = (await callIdentity("GET", `${path}/${endpoint.id}`, { app, key: endpoint.key })).body;
    expect(state.failing_since).toBe(new Date(t0).toISOString());

    // A success resets the count: failing_since is the first failure after the last success.
    healthy = true;
    clock.set(new Date(t0 + minute));
    await sweeper.sweep();
    state = (await callIdentity("GET", `${path}/${endpoint.id}`, { app, key: endpoint.key })).body;
    expect(state).toMatchObject({ failing_since: null, last_success_at: new Date(t0 + minute).toISOString() });

    healthy = false;
    const t1 = t0 + 2 * minute;
    clock.set(new Date(t1));
    await emit(org.id, "invite.claimed", { n: 2 });
    await emit(org.id, "invite.claimed", { n: 3 });
    await sweeper.sweep();
    state = (await callIdentity("GET", `${path}/${endpoint.id}`, { app, key: endpoint.key })).body;
    expect(state).toMatchObject({ status: "active", failing_since: new Date(t1).toISOString() });

    // Events keep coming, one every 12 hours, and every attempt fails until just short of 5 days: still active.
    const fiveDays = 5 * 24 * 60 * minute;
    for (let at = t1 + 720 * minute; at < t1 + fiveDays; at += 720 * minute) {
      clock.set(new Date(at));
      await emit(org.id, "invite.claimed", { at });
      await sweeper.sweep();
    }
    clock.set(new Date(t1 + fiveDays - 1000));
    await emit(org.id, "invite.claimed", { n: 4 });
    await sweeper.sweep();
    expect((await callIdentity("GET", `${path}/${endpoint.id}`, { app, key: endpoint.key })).body.status).toBe(
      "active",
    );
    // The next failed attempt (a minute later, the last event's first retry) is past 5 days: disabled.
    const disabledAt = new Date(t1 + fiveDays - 1000 + minute);
    clock.set(disabledAt);
    await sweeper.sweep();
    state = (await callIdentity("GET", `${path}/${endpoint.id}`, { app, key: endpoint.key })).body;
    expect(state).toMatchObject({
      status: "disabled",
      disabled_reason: "failing",
      disabled_at: disabledAt.toISOString(),
      failing_since: new Date(t1).toISOString(),
    });
    const statuses = (await deliveriesOf(endpoint)).map((d) => d.status);
    expect(statuses.filter((status) => status === "pending")).toEqual([]);
    expect(statuses.filter((status) => status === "delivered").length).toBe(1);
    const dropped = statuses.filter((status) => status === "dropped").length;
    expect(dropped).toBeGreaterThan(1);
    const disabledList = await callIdentity("GET", `${path}?status=disabled`, { app, key: endpoint.key });
    expect(disabledList.body.items.map((i: any) => i.id)).toEqual([endpoint.id]);
    const audit = await callIdentity("GET", `/api/v1/identity/audit?org_id=${org.id}`, {
      session: (await memberOf(org.id, "owner")).session,
    });
    expect(audit.body.items[0]).toMatchObject({
      action: "webhook.disabled",
      actor: { type: "system" },
      details: { reason: "failing", dropped_deliveries: dropped },
    });
    const sent = hooks.received.length;
    clock.advance(24 * 60 * minute);
    await sweeper.sweep();
    expect(hooks.received.length).toBe(sent);
  }, 30_000);

  test("days with nothing to send do not count as failing: one failed attempt after them neither disables nor drops", async () => {
    const hooks = receiver();
    let healthy = false;
    hooks.on("/quiet", () => new Response(healthy ? "fine" : "deploying", { status: healthy ? 200 : 503 }));
    const org = await createTestOrg();
    const endpoint = await createEndpoint(org, hooks.url("/quiet"), ["invite.claimed"]);
    const clock = testClock();
    const sweeper = await testSweeper({ clock: clock.now });
    const t0 = clock.now().getTime();
    // A delivery fails all its 8 attempts (38 h 36 min) and is dead-lettered.
    await emit(org.id, "invite.claimed", { n: 1 });
    for (const delay of [0, 1, 5, 30, 120, 720, 720, 720]) {
      clock.advance(delay * minute);
      await sweeper.sweep();
    }
    expect((await deliveriesOf(endpoint)).map((d) => d.status)).toEqual(["dead"]);
    // The receiver is fixed; nothing happens for days. Then one attempt fails (a deploy), 6 days after t0.
    clock.set(new Date(t0 + 6 * 24 * 60 * minute));
    await emit(org.id, "invite.claimed", { n: 2 });
    await sweeper.sweep();
    const state = (await callIdentity("GET", `${path}/${endpoint.id}`, { app, key: endpoint.key })).body;
    expect(state).toMatchObject({ status: "active", failing_since: clock.now().toISOString() });
    const [latest] = await deliveriesOf(endpoint);
    expect(latest).toMatchObject({ status: "pending", attempt_count: 1 });
    // Its retry a minute later is received.
    healthy = true;
    clock.advance(minute);
    await sweeper.sweep();
    expect((await deliveriesOf(endpoint)).map((d) => d.status)).toEqual(["delivered", "dead"]);
  }, 30_000);

  test("an endpoint failing before sql/081 whose attempts have all been purged is not disabled by its next failure", async () => {
    const { ctx } = await testRuntime();
    const hooks = receiver();
    hooks.on("/upgraded", () => new Response("deploying", { status: 503 }));
    const org = await createTestOrg();
    const endpoint = await createEndpoint(org, hooks.url("/upgraded"), ["invite.claimed"]);
    const clock = testClock();
    // As sql/081 leaves it: failing 40 days ago, its deliveries purged since, so no last failure to carry over.
    await ctx.sql`
      UPDATE webhook_endpoints SET failing_since = ${new Date(clock.now().getTime() - 40 * 24 * 60 * minute)},
        last_failure_at = NULL
      WHERE id = ${endpoint.id}::uuid`;
    await emit(org.id, "invite.claimed", { n: 1 });
    const sweeper = await testSweeper({ clock: clock.now });
    await sweeper.sweep();
    const state = (await callIdentity("GET", `${path}/${endpoint.id}`, { app, key: endpoint.key })).body;
    expect(state).toMatchObject({ status: "active", failing_since: clock.now().toISOString() });
    expect((await deliveriesOf(endpoint)).map((d) => [d.status, d.attempt_count])).toEqual([["pending", 1]]);
  });

  test("events for an endpoint disabled for failing are kept as dropped deliveries, sent by redeliver once it is enabled", async () => {
    const { ctx } = await testRuntime();
    const hooks = receiver();
    const org = await createTestOrg();
    const endpoint = await createEndpoint(org, hooks.url("/back"), ["invite.claimed"]);
    const deleted = await createEndpoint(org, hooks.url("/gone"), ["invite.claimed"]);
    await callIdentity("DELETE", `${path}/${deleted.id}`, { app, key: deleted.key });
    await ctx.sql`
      UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'failing', disabled_at = now(),
        failing_since = now() - interval '6 days'
      WHERE id = ${endpoint.id}::uuid`;
    const clock = testClock();
    const sweeper = await testSweeper({ clock: clock.now });
    // Whatever earlier tests left in the outbox goes first, so the report below is this event's alone.
    await sweeper.sweep();
    const eventId = await emit(org.id, "invite.claimed", { n: 1 });
    // Counted apart from the deliveries to send: nothing is sent for it.
    expect(await sweeper.sweep()).toMatchObject({ events_dispatched: 1, deliveries_created: 0, deliveries_dropped: 1 });
    expect(hooks.received).toEqual([]);
    const [missed] = await deliveriesOf(endpoint);
    expect(missed).toMatchObject({ event_id: eventId, status: "dropped", attempt_count: 0, next_attempt_at: null });
    expect(await deliveriesOf(deleted)).toEqual([]);

    await callIdentity("POST", `${path}/${endpoint.id}/enable`, { app, key: endpoint.key });
    const again = await callIdentity("POST", `${path}/${endpoint.id}/deliveries/${missed.id}/redeliver`, {
      app,
      key: endpoint.key,
    });
    expect(again.status).toBe(202);
    clock.advance(1000);
    await sweeper.sweep();
    expect(hooks.received.map((r) => [r.path, r.headers["x-svc-delivery-id"], JSON.parse(r.body).id])).toEqual([
      ["/back", missed.id, eventId],
    ]);
  });

  test("an attempt that hangs holds back neither new events nor deliveries that become due meanwhile", async () => {
    const hooks = receiver();
    const gate = Promise.withResolvers<void>();
    hooks.on("/stuck", async () => {
      await gate.promise;
      return new Response("late");
    });
    const org = await createTestOrg();
    const stuck = await createEndpoint(org, hooks.url("/stuck"), ["invite.claimed"]);
    const live = await createEndpoint(org, hooks.url("/live"), ["delegation.created"]);
    await callIdentity("POST", `${path}/${stuck.id}/ping`, { app, key: stuck.key });
    const sweeper = await testSweeper({ clock: () => new Date(Date.now() + 1000) });
    const sweeping = sweeper.sweep();
    while (hooks.received.length < 1) await Bun.sleep(10);
    // The scheduler starts no sweep while this one runs; this one must find them.
    await emit(org.id, "delegation.created", { n: 1 });
    await callIdentity("POST", `${path}/${live.id}/ping`, { app, key: live.key });
    for (const deadline = Date.now() + 5000; hooks.received.length < 3 && Date.now() < deadline; ) await Bun.sleep(20);
    const got = hooks.received.map((r) => [r.path, r.headers["x-svc-event-type"]]);
    gate.resolve();
    await sweeping;
    expect(got.sort()).toEqual([
      ["/live", "delegation.created"],
      ["/live", "ping"],
      ["/stuck", "ping"],
    ]);
  }, 30_000);

  test("a sweeper that dies between sending and recording: the lease runs out and the delivery is sent again", async () => {
    const { ctx } = await testRuntime();
    const hooks = receiver();
    const org = await createTestOrg();
    const endpoint = await createEndpoint(org, hooks.url("/twice"), ["invite.claimed"]);
    await emit(org.id, "invite.claimed", { n: 1 });
    const clock = testClock();
    const sweeper = await testSweeper({ clock: clock.now, leaseMs: 2 * minute });
    // Turn the event into its delivery, then lease and send it as a sweeper would, and "crash" before recording.
    const [delivery] = await (async () => {
      const { dispatchOutbox } = await import("../../src/modules/webhooks/queue.ts");
      await dispatchOutbox(ctx.sql, clock.now());
      return deliveriesOf(endpoint);
    })();
    const claimed = await claimDue(ctx.sql, {
      now: clock.now(),
      limit: 1000,
      perEndpoint: 4,
      leaseId: crypto.randomUUID(),
      leaseMs: 2 * minute,
      keyId: ctx.webhookSecrets?.keyId ?? "",
    });
    const mine = claimed.find((c) => c.id === delivery.id);
    expect(mine).toBeDefined();
    await testSender().send({ url: mine?.url ?? "", headers: { "x-svc-delivery-id": delivery.id }, body: "{}" });
    expect(hooks.received.length).toBe(1);

    // While the lease holds, no other sweep sends it.
    clock.advance(2 * minute - 1000);
    await sweeper.sweep();
    expect(hooks.received.length).toBe(1);
    clock.advance(1000);
    await sweeper.sweep();
    expect(hooks.received.map((r) => r.headers["x-svc-delivery-id"])).toEqual([delivery.id, delivery.id]);
    const [after] = await deliveriesOf(endpoint);
    expect(after).toMatchObject({ status: "delivered", attempt_count: 1 });
  });

  test("history past the retention is purged: finished deliveries with their attempts, and dispatched events", async () => {
    const { ctx } = await testRuntime();
    const hooks = receiver();
    const org = await createTestOrg();
    const endpoint = await createEndpoint(org, hooks.url("/kept"), ["invite.claimed"]);
    await emit(org.id, "invite.claimed", { n: 1 });
    await emit(org.id, "invite.claimed", { n: 2 });
    await (await testSweeper({ clock: testClock().now })).sweep();
    const [newer, older] = await deliveriesOf(endpoint);
    const pinged = await callIdentity("POST", `${path}/${endpoint.id}/ping`, { app, key: endpoint.key });
    const undispatched = await emit(org.id, "invite.claimed", { n: 3 });
    // Never dispatched for longer than the retention (no instance had WEBHOOK_SECRET_KEY): it goes too.
    await emit(org.id, "invite.claimed", { n: 4 });
    await ctx.sql`
      UPDATE webhook_deliveries SET created_at = now() - interval '31 days'
      WHERE id IN (${older.id}::uuid, ${newer.id}::uuid, ${pinged.body.id}::uuid)`;
    // Kept from its last attempt: the newer one was attempted again today, the older one a month ago.
    await ctx.sql`
      UPDATE webhook_deliveries SET last_attempt_at = now() - interval '31 days' WHERE id = ${older.id}::uuid`;
    await ctx.sql`
      UPDATE event_outbox SET created_at = now() - interval '31 days',
        dispatched_at = CASE WHEN dispatched_at IS NOT NULL THEN now() - interval '31 days' END
      WHERE org_id = ${org.id}::uuid AND id <> ${undispatched}::uuid`;

    const purged = await purgeWebhookHistory(ctx.sql, new Date(Date.now() - 30 * 24 * 60 * minute));
    expect(purged).toEqual({ deliveries: 1, events: 3 });
    // The pending ping stays however old, and so does a recent event not yet turned into deliveries.
    expect((await deliveriesOf(endpoint)).map((d) => d.id).sort()).toEqual([newer.id, pinged.body.id].sort());
    const [attempts] = await ctx.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM webhook_attempts WHERE delivery_id = ${older.id}::uuid`;
    expect(attempts?.n).toBe(0);
    const events = await ctx.sql<{ id: string }[]>`SELECT id FROM event_outbox WHERE org_id = ${org.id}::uuid`;
    expect(events.map((e) => e.id)).toEqual([undispatched]);
  });
});
