import { describe, expect, test } from "bun:test";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { testRuntime } from "../support/runtime.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";
import { storedEvents } from "../support/telemetry-store.ts";

const domain = "malformed.example.net";

async function postRaw(key: string, body: string | Uint8Array, contentType = "application/json") {
  const { app } = await testRuntime();
  const response = await app.handle(
    new Request("http://test.local/events", {
      method: "POST",
      headers: { "x-api-key": key, "content-type": contentType },
      body,
    }),
  );
  return { status: response.status, body: (await response.json()) as { code: string } };
}

describe("malformed input gets a clear 4xx and stores nothing", () => {
  test("malformed JSON, invalid UTF-8, wrong media type, empty body", async () => {
    const agent = await createTestOrg({ type: "agent" });
    expect((await postRaw(agent.key, '{"document_type": "event_batch",')).status).toBe(400);
    const bytes = new TextEncoder().encode(JSON.stringify(batch([validEvents.retrieved(domain)])));
    const broken = new Uint8Array([...bytes.slice(0, 20), 0xc3, 0x28, ...bytes.slice(20)]);
    expect((await postRaw(agent.key, broken)).body.code).toBe("invalid_utf8");
    expect((await postRaw(agent.key, "document_type=event", "application/x-www-form-urlencoded")).status).toBe(415);
    expect((await postRaw(agent.key, "")).status).toBe(400);
    expect(await storedEvents(agent.id)).toEqual([]);
  });

  test("a UUID with a urn:uuid: prefix is 400 naming the field wherever a UUID goes", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const urn = `urn:uuid:${crypto.randomUUID()}`;
    const refusals: [string, string, Record<string, unknown> | undefined, string][] = [
      ["POST", "/events", batch([{ ...validEvents.retrieved(domain), id: urn }]), "/events/0/id"],
      ["POST", "/events", batch([validEvents.retrieved(domain)], { session_id: urn }), "/session_id"],
      ["POST", "/sessions/start", { prior_session_ids: [urn] }, "/prior_session_ids/0"],
      ["POST", "/sessions/end", { session_id: urn }, "/session_id"],
      ["POST", "/click-tokens", { session_id: urn, content_url: `https://${domain}/a` }, "/session_id"],
      ["GET", `/sessions/${urn}/document`, undefined, "/id"],
    ];
    for (const [method, path, body, field] of refusals) {
      const res = await call(method, path, { key: agent.key, ...(body ? { body } : {}) });
      expect({ path, field, status: res.status }).toEqual({ path, field, status: 400 });
      expect(res.body.errors.map((error: { path: string }) => error.path)).toContain(field);
    }
    expect(await storedEvents(agent.id)).toEqual([]);
  });

  test("a body that is not an object, and wrong types", async () => {
    const agent = await createTestOrg({ type: "agent" });
    for (const body of ["[]", "null", "42", '"text"']) {
      expect((await postRaw(agent.key, body)).status).toBe(400);
    }
    for (const body of [
      { document_type: "event_batch", schema_version: "1.0", events: "all of them" },
      { document_type: "event_batch", schema_version: 1, events: [validEvents.retrieved(domain)] },
      batch([{ ...validEvents.retrieved(domain), session_id: "not-a-uuid" }]),
      batch([{ ...validEvents.retrieved(domain), data: ["list"] }]),
      batch([42, null, "event"]),
    ]) {
      const res = await call("POST", "/events", { key: agent.key, body });
      expect(res.status).toBe(400);
      expect(res.body.errors.length).toBeGreaterThan(0);
    }
    expect(await storedEvents(agent.id)).toEqual([]);
  });

  test("huge numbers, NUL characters, lone surrogates and deep nesting", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const event = JSON.stringify(validEvents.retrieved(domain));
    const envelope = (inner: string) =>
      `{"document_type":"event_batch","schema_version":"1.0","session_id":"${crypto.randomUUID()}","events":[${inner}]}`;
    const withData = (data: string) => envelope(event.replace(/"data":\{[^}]*\}/, `"data":${data}`));
    for (const body of [
      withData('{"views": 1e400}'),
      withData('{"note": "a\\u0000b"}'),
      withData('{"note": "\\ud800"}'),
      withData('{"\\ud800": 1}'),
      withData(`${'{"a":'.repeat(40)}1${"}".repeat(40)}`),
      envelope(event.replace('"content_url":"', '"content_url":"https://x.example/\\u0000')),
    ]) {
      const res = await postRaw(agent.key, body);
      expect(res.status).toBe(400);
    }
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    expect((await postRaw(agent.key, deep)).status).toBe(400);
    expect(await storedEvents(agent.id)).toEqual([]);
  });

  test("a body over MAX_BODY_BYTES is 413", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const { ctx } = await testRuntime();
    const padding = "x".repeat(ctx.config.MAX_BODY_BYTES);
    const res = await postRaw(agent.key, JSON.stringify(batch([validEvents.retrieved(domain)], { padding })));
    expect(res.status).toBe(413);
  });

  test("overlong strings are refused", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const res = await call("POST", "/events", {
      key: agent.key,
      body: batch([validEvents.retrieved(domain, { content_url: `https://${domain}/${"a".repeat(3000)}` })], {
        session_id: crypto.randomUUID(),
      }),
    });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe("/events/0/content_url");
  });

  test("session and click-token bodies with unstorable strings are 400, not 500", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const start = await call("POST", "/sessions/start", { key: agent.key, body: { agent_id: "a\u0000b" } });
    expect(start.status).toBe(400);
    expect(start.body.errors[0].path).toBe("/agent_id");
    const { body } = await call("POST", "/sessions/start", { key: agent.key, body: { external_session_id: "\ud800" } });
    expect(body.code).toBe("validation_failed");
    const session = (await call("POST", "/sessions/start", { key: agent.key, body: {} })).body.session_id;
    const token = await call("POST", "/click-tokens", {
      key: agent.key,
      body: { session_id: session, content_url: "https://x.example/\u0000" },
    });
    expect(token.status).toBe(400);
  });
});
