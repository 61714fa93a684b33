import { describe, expect, test } from "bun:test";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { ago, batch, validEvents } from "../support/telemetry-events.ts";
import { storedEvents } from "../support/telemetry-store.ts";

const domain = "rules.example.net";

/** Posts one event in a session-bound batch and returns the response. */
async function postOne(event: Record<string, unknown>, envelope: Record<string, unknown> = {}) {
  const agent = await createTestOrg({ type: "agent" });
  const res = await call("POST", "/events", {
    key: agent.key,
    body: batch([event], { session_id: crypto.randomUUID(), ...envelope }),
  });
  return { res, agent };
}

/** Expects a 400 naming `path` on event 0 and nothing stored. */
async function expectRefused(event: Record<string, unknown>, path: string, envelope: Record<string, unknown> = {}) {
  const { res, agent } = await postOne(event, envelope);
  expect(res.status).toBe(400);
  expect(res.body.code).toBe("validation_failed");
  expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  expect(res.body.invalid_events).toEqual([0]);
  expect(await storedEvents(agent.id)).toEqual([]);
  return res.body;
}

async function expectStored(event: Record<string, unknown>, envelope: Record<string, unknown> = {}) {
  const { res, agent } = await postOne(event, envelope);
  expect(res.status).toBe(200);
  const [stored] = await storedEvents(agent.id);
  expect(stored).toBeDefined();
  return stored!;
}

describe("type × source_role", () => {
  const agentOnly = [
    validEvents.grounded(domain),
    validEvents.cited(domain),
    validEvents.presented(domain),
    validEvents.engaged(domain),
    validEvents.turnStarted(),
    validEvents.turnStarted({ type: "turn_completed" }),
  ];
  for (const event of agentOnly) {
    test(`${event.type} only from agent`, async () => {
      for (const role of ["origin", "edge", "index"]) {
        await expectRefused({ ...event, id: crypto.randomUUID(), source_role: role }, "/events/0/source_role");
      }
      const stored = await expectStored({ ...event, id: crypto.randomUUID() });
      expect(stored.source_role).toBe("agent");
    });
  }

  test("content_retrieved from every role, and it must name one", async () => {
    for (const role of ["origin", "edge", "index", "agent"]) {
      expect((await expectStored(validEvents.retrieved(domain, { source_role: role }))).source_role).toBe(role);
    }
    await expectRefused(validEvents.retrieved(domain, { source_role: undefined }), "/events/0/source_role");
  });

  test("checkout_completed from index or agent only", async () => {
    for (const role of ["index", "agent"]) await expectStored(validEvents.checkout({ source_role: role }));
    for (const role of ["origin", "edge", undefined]) {
      await expectRefused(validEvents.checkout({ source_role: role }), "/events/0/source_role");
    }
  });

  test("an unknown source_role is refused", async () => {
    await expectRefused(validEvents.retrieved(domain, { source_role: "crawler" }), "/events/0/source_role");
  });
});

describe("event types and schema_version", () => {
  test("content_displayed is refused naming content_presented", async () => {
    const body = await expectRefused({ ...validEvents.presented(domain), type: "content_displayed" }, "/events/0/type");
    expect(body.errors[0].message).toContain("content_presented");
  });

  test("an unknown type is refused", async () => {
    await expectRefused({ ...validEvents.retrieved(domain), type: "content_liked" }, "/events/0/type");
  });

  test("schema_version must be 1.x", async () => {
    const agent = await createTestOrg({ type: "agent" });
    for (const version of ["1", "1.0", "1.3", "1.2.1"]) {
      const res = await call("POST", "/events", {
        key: agent.key,
        body: batch([validEvents.retrieved(domain)], { session_id: crypto.randomUUID(), schema_version: version }),
      });
      expect(res.status).toBe(200);
    }
    for (const version of ["2.0", "0.1", "v1", ""]) {
      const res = await call("POST", "/events", {
        key: agent.key,
        body: batch([validEvents.retrieved(domain)], { session_id: crypto.randomUUID(), schema_version: version }),
      });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].path).toBe("/schema_version");
    }
    const missing = await call("POST", "/events", {
      key: agent.key,
      body: { document_type: "event_batch", events: [validEvents.retrieved(domain)] },
    });
    expect(missing.status).toBe(400);
  });
});

describe("v1 structural rules", () => {
  test("content events need content_url or content_id", async () => {
    await expectRefused(validEvents.grounded(domain, { content_url: undefined }), "/events/0/content_url");
    const stored = await expectStored(
      validEvents.grounded(domain, { content_url: undefined, content_id: "doi:10.1/x" }),
    );
    expect(stored.content_id).toBe("doi:10.1/x");
    expect(stored.content_host).toBeNull();
  });

  test("content_cited and content_presented need an id and output_id", async () => {
    for (const event of [validEvents.cited(domain), validEvents.presented(domain)]) {
      await expectRefused({ ...event, id: undefined }, "/events/0/id");
      await expectRefused({ ...event, output_id: undefined }, "/events/0/output_id");
    }
  });

  test("content_cited needs data.citation_type", async () => {
    await expectRefused(validEvents.cited(domain, { data: { position: "primary" } }), "/events/0/data/citation_type");
  });

  test("content_presented needs a valid presentation_kind and a presentation_type", async () => {
    await expectRefused(
      validEvents.presented(domain, { data: { presentation_kind: "banner", presentation_type: "card" } }),
      "/events/0/data/presentation_kind",
    );
    await expectRefused(
      validEvents.presented(domain, { data: { presentation_kind: "content", presentation_type: "" } }),
      "/events/0/data/presentation_type",
    );
    const stored = await expectStored(
      validEvents.presented(domain, { data: { presentation_kind: "source_reference", presentation_type: "hologram" } }),
    );
    expect(stored.data.presentation_type).toBe("hologram");
  });

  test("content_grounded needs data.scope", async () => {
    await expectRefused(validEvents.grounded(domain, { data: { cached: true } }), "/events/0/data/scope");
  });

  test("content_engaged needs presentation_id unless it carries a ctx_token", async () => {
    await expectRefused(validEvents.engaged(domain, { presentation_id: undefined }), "/events/0/presentation_id");
    const presentationId = crypto.randomUUID();
    expect((await expectStored(validEvents.engaged(domain, { presentation_id: presentationId }))).presentation_id).toBe(
      presentationId,
    );
  });

  // Interface rule 3 and the standard's notes: retrieval-level observers (origin, edge, index)
  // correlate by content_telemetry_id; an agent's retrieval, like any other event, needs a session.
  test("an event needs session_id or ctx_token, except content_retrieved from an origin, edge or index", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const post = (event: Record<string, unknown>) => call("POST", "/events", { key: agent.key, body: batch([event]) });
    const correlation = crypto.randomUUID();
    for (const role of ["origin", "edge", "index"]) {
      const res = await post(validEvents.retrieved(domain, { source_role: role, content_telemetry_id: correlation }));
      expect(res.status).toBe(200);
    }
    for (const event of [validEvents.retrieved(domain, { source_role: "agent" }), validEvents.cited(domain)]) {
      const refused = await post(event);
      expect(refused.status).toBe(400);
      expect(refused.body.errors[0].path).toBe("/events/0/session_id");
    }
    const stored = await storedEvents(agent.id);
    expect(stored.map((e) => e.content_telemetry_id)).toEqual(Array(3).fill(correlation));
    expect(stored.every((e) => e.session_id === null)).toBe(true);
  });

  test("a ctx_token is accepted only on content_engaged and checkout_completed", async () => {
    await expectRefused(validEvents.cited(domain, { ctx_token: `ctx_${"a".repeat(43)}` }), "/events/0/ctx_token");
  });

  test("checkout_completed needs an integer value in minor units and a currency", async () => {
    await expectRefused(
      validEvents.checkout({ data: { value_amount: 49.99, currency: "USD" } }),
      "/events/0/data/value_amount",
    );
    await expectRefused(
      validEvents.checkout({ data: { value_amount: 4999, currency: "usd" } }),
      "/events/0/data/currency",
    );
    const stored = await expectStored(validEvents.checkout());
    expect(stored.data).toEqual({ value_amount: 4999, currency: "USD" });
  });
});

describe("values", () => {
  test("timestamps: ISO 8601 with an offset, not far in the future, not before 2000", async () => {
    for (const timestamp of [
      "2026-01-01 10:00:00",
      "yesterday",
      "2026-13-01T00:00:00Z",
      // Days past their month's end, which Date.parse would move into the next month.
      "2025-02-30T10:00:00Z",
      "2025-04-31T10:00:00Z",
      "2025-02-29T10:00:00Z",
      // A leap second: no 61st second in JavaScript dates or PostgreSQL timestamps.
      "2016-12-31T23:59:60Z",
      new Date(Date.now() + 3_600_000).toISOString(),
      "1999-12-31T23:59:59Z",
      "+275760-09-13T00:00:00Z",
    ]) {
      await expectRefused(validEvents.retrieved(domain, { timestamp }), "/events/0/timestamp");
    }
    const at = new Date(Math.floor((Date.now() - 3_600_000) / 1000) * 1000);
    const plusTwo = `${new Date(at.getTime() + 7_200_000).toISOString().slice(0, 19)}+02:00`;
    expect((await expectStored(validEvents.retrieved(domain, { timestamp: plusTwo }))).event_time).toEqual(at);
    const agent = await createTestOrg({ type: "agent" });
    const session = { schema_version: "1.0", session_id: crypto.randomUUID(), started_at: "2025-02-30T10:00:00Z" };
    const described = await call("POST", "/events", { key: agent.key, body: { ...session, events: [] } });
    expect([described.status, described.body.errors?.[0]?.path]).toEqual([400, "/started_at"]);
    const leapDay = validEvents.retrieved(domain, { timestamp: "2024-02-29T10:00:00Z" });
    expect((await expectStored(leapDay)).event_time).toEqual(new Date("2024-02-29T10:00:00Z"));
  });

  test("content_url must be an http(s) URL; its host is stored normalised", async () => {
    for (const content_url of [
      "javascript:alert(1)",
      "ftp://files.example.com/a",
      "not a url",
      "mailto:x@example.com",
      // Stored and shown as sent: credentials would reach every reader, and parsing forgives these forms.
      `https://reader:hunter2@${domain}/a`,
      ` https://${domain}/a`,
      `https://${domain}/a\n`,
      `https://${domain}/a b`,
      `https:\\${domain}a`,
      `https:/${domain}/a`,
    ]) {
      await expectRefused(validEvents.retrieved(domain, { content_url }), "/events/0/content_url");
    }
    const stored = await expectStored(
      validEvents.retrieved(domain, { content_url: "https://News.Example.NET.:8443/a?b=1" }),
    );
    expect(stored.content_host).toBe("news.example.net");
    expect(stored.content_url).toBe("https://News.Example.NET.:8443/a?b=1");
  });

  test("a turn's content URL lists hold http(s) URLs; content_last_modified is a date-time", async () => {
    const turn = { privacy_level: "minimal", content_urls_retrieved: [`https://${domain}/a`, "javascript:alert(1)"] };
    await expectRefused(validEvents.turnStarted({ turn }), "/events/0/turn/content_urls_retrieved/1");
    const cited = { privacy_level: "minimal", content_urls_cited: ["ftp://files.example.com/a"] };
    await expectRefused(validEvents.turnStarted({ turn: cited }), "/events/0/turn/content_urls_cited/0");
    const data = { scope: "turn", content_last_modified: "last tuesday" };
    await expectRefused(validEvents.grounded(domain, { data }), "/events/0/data/content_last_modified");
    const modified = { scope: "turn", content_last_modified: "2026-01-31T08:00:00Z" };
    expect((await expectStored(validEvents.grounded(domain, { data: modified }))).data).toMatchObject(modified);
  });

  test("an event's session_id matches the document's whatever the case of its hex digits", async () => {
    const sessionId = crypto.randomUUID();
    const event = validEvents.retrieved(domain, { source_role: "agent", session_id: sessionId.toUpperCase() });
    expect((await expectStored(event, { session_id: sessionId })).session_id).toBe(sessionId);
  });

  // The v1 schemas close these sets, so an unknown value is refused naming the allowed ones (test/conformance).
  test("closed value sets are refused, not normalised", async () => {
    const body = await expectRefused(
      validEvents.cited(domain, { data: { citation_type: "homage", position: "primary" } }),
      "/events/0/data/citation_type",
    );
    expect(body.errors[0].message).toBe(
      'must be "direct_quote", "paraphrase", "reference", "contradiction" or "unclassified"',
    );
    await expectRefused(validEvents.grounded(domain, { data: { scope: "galaxy" } }), "/events/0/data/scope");
  });

  test("open value sets are stored as sent", async () => {
    const engaged = await expectStored(
      validEvents.engaged(domain, { data: { engagement_type: "telepathy", media_type: "smell" } }),
    );
    expect(engaged.data).toEqual({ engagement_type: "telepathy", media_type: "smell" });
  });

  test("data.ip_hash is stripped", async () => {
    const stored = await expectStored(
      validEvents.retrieved(domain, { data: { user_agent: "Bot", ip_hash: "abc123" } }),
    );
    expect(stored.data).toEqual({ user_agent: "Bot" });
  });

  test("unknown fields are tolerated and not stored", async () => {
    const stored = await expectStored(validEvents.retrieved(domain, { x_vendor: { a: 1 } }), { x_envelope: true });
    expect(stored).not.toHaveProperty("x_vendor");
  });

  test("a too large data object is refused", async () => {
    await expectRefused(validEvents.retrieved(domain, { data: { blob: "x".repeat(20_000) } }), "/events/0/data");
  });

  test("events without an id get one generated", async () => {
    const stored = await expectStored(validEvents.retrieved(domain, { id: undefined, timestamp: ago(5) }));
    expect(stored.event_id).toMatch(/^[0-9a-f-]{36}$/);
  });
});
