import { describe, expect, test } from "bun:test";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { ago, validEvents } from "../support/telemetry-events.ts";
import { storedEvents } from "../support/telemetry-store.ts";

const fullTurn = {
  query_text: "how do I fix a bike chain?",
  response_text: "Use a chain tool…",
  query_intent: "how_to",
  response_type: "answer",
  response_mode: "standard",
  topics: ["cycling"],
  content_urls_retrieved: ["https://bikes.example.com/chain"],
  content_urls_cited: ["https://bikes.example.com/chain"],
  query_tokens: 9,
  response_tokens: 120,
  model_id: "model-x",
  ad_rendered: false,
  mood: "cheerful",
};
const everyField = Object.keys(fullTurn).filter((key) => key !== "mood");
const intentFields = everyField.filter((key) => key !== "query_text" && key !== "response_text");
const minimalFields = ["content_urls_retrieved", "content_urls_cited", "query_tokens", "response_tokens"];

/** Reports one turn event in a session document that declares `sessionPrivacy` (full: the turn's own level governs). */
async function storedTurn(turn: Record<string, unknown>, sessionPrivacy = "full") {
  const agent = await createTestOrg({ type: "agent" });
  const event = validEvents.turnStarted({ turn });
  const body = {
    schema_version: "1.0",
    session_id: crypto.randomUUID(),
    started_at: ago(3600),
    privacy_level: sessionPrivacy,
    events: [event],
  };
  const res = await call("POST", "/events", { key: agent.key, body });
  expect(res.status).toBe(200);
  const [stored] = await storedEvents(agent.id);
  return { turn: stored?.turn as Record<string, unknown>, stripped: res.body.stripped };
}

const keysOf = (turn: Record<string, unknown>) =>
  Object.keys(turn)
    .filter((key) => key !== "privacy_level")
    .sort();

describe("turn privacy stripping", () => {
  test("full and summary keep every known field (unknown ones are dropped)", async () => {
    for (const level of ["full", "summary"]) {
      const { turn, stripped } = await storedTurn({ ...fullTurn, privacy_level: level });
      expect(turn.privacy_level).toBe(level);
      expect(keysOf(turn)).toEqual([...everyField].sort());
      expect(turn.query_text).toBe(fullTurn.query_text);
      expect(stripped).toBeUndefined();
    }
  });

  test("intent withholds the query and response text, and the answer names what was stripped", async () => {
    const { turn, stripped } = await storedTurn({ ...fullTurn, privacy_level: "intent" });
    expect(keysOf(turn)).toEqual([...intentFields].sort());
    expect(stripped).toEqual(
      ["query_text", "response_text"].map((field) => ({
        path: `/events/0/turn/${field}`,
        reason: "not allowed at privacy level intent (section 5.5)",
      })),
    );
  });

  test("minimal keeps only token counts and content URLs", async () => {
    const { turn } = await storedTurn({ ...fullTurn, privacy_level: "minimal" });
    expect(keysOf(turn)).toEqual([...minimalFields].sort());
    expect(turn.content_urls_cited).toEqual(fullTurn.content_urls_cited);
  });

  test("a session document's privacy_level tightens a looser turn level", async () => {
    const { turn } = await storedTurn({ ...fullTurn, privacy_level: "full" }, "intent");
    expect(turn.privacy_level).toBe("intent");
    expect(turn).not.toHaveProperty("query_text");
  });

  test("a stored session's level applies to later batches, which cannot loosen it", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const started = await call("POST", "/sessions/start", { key: agent.key, body: { privacy_level: "minimal" } });
    const event = validEvents.turnStarted({ turn: { ...fullTurn, privacy_level: "full" } });
    const res = await call("POST", "/events", {
      key: agent.key,
      body: { document_type: "event", schema_version: "1.0", session_id: started.body.session_id, event },
    });
    expect(res.status).toBe(200);
    const [stored] = await storedEvents(agent.id);
    expect(stored?.turn).toMatchObject({ privacy_level: "minimal" });
    expect(keysOf(stored?.turn as Record<string, unknown>)).toEqual([...minimalFields].sort());
  });

  test("a stored session that declared full keeps a full turn", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const started = await call("POST", "/sessions/start", { key: agent.key, body: { privacy_level: "full" } });
    const event = validEvents.turnStarted({ turn: { ...fullTurn, privacy_level: "full" } });
    await call("POST", "/events", {
      key: agent.key,
      body: { document_type: "event", schema_version: "1.0", session_id: started.body.session_id, event },
    });
    const [stored] = await storedEvents(agent.id);
    expect(stored?.turn).toMatchObject({ privacy_level: "full", query_text: fullTurn.query_text });
  });

  test("a session that declares no level leaves each turn to its own (standard 5.5), batch or document", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const full = validEvents.turnStarted({ turn: { ...fullTurn, privacy_level: "full" } });
    await call("POST", "/events", {
      key: agent.key,
      body: { document_type: "event", schema_version: "1.0", session_id: crypto.randomUUID(), event: full },
    });
    const intent = validEvents.turnStarted({ turn: { ...fullTurn, privacy_level: "intent" } });
    const described = { schema_version: "1.0", session_id: crypto.randomUUID(), started_at: ago(60), events: [intent] };
    const res = await call("POST", "/events", { key: agent.key, body: described });
    expect(res.body.stripped?.map((field: { path: string }) => field.path)).toEqual([
      "/events/0/turn/query_text",
      "/events/0/turn/response_text",
    ]);
    const turns = (await storedEvents(agent.id)).map((event) => event.turn as Record<string, unknown>);
    const byLevel = Object.fromEntries(turns.map((turn) => [turn.privacy_level, keysOf(turn)]));
    expect(byLevel).toEqual({ full: [...everyField].sort(), intent: [...intentFields].sort() });
  });
});

describe("conversation fields sent in an event's data", () => {
  /** Reports one content_grounded whose data carries turn fields, in a session started at `level` (or declaring none). */
  async function storedData(level?: string) {
    const agent = await createTestOrg({ type: "agent" });
    const started = await call("POST", "/sessions/start", { key: agent.key, body: { privacy_level: level } });
    const event = validEvents.grounded("bikes.example.com", {
      data: { scope: "turn", query_text: "raw question", response_text: "raw answer", query_tokens: 3, note: "kept" },
    });
    const res = await call("POST", "/events", {
      key: agent.key,
      body: { document_type: "event", schema_version: "1.0", session_id: started.body.session_id, event },
    });
    expect(res.status).toBe(200);
    const [stored] = await storedEvents(agent.id);
    return { data: stored?.data as Record<string, unknown>, stripped: res.body.stripped };
  }

  test("are stripped at ingest to the session's level, as a turn's are, and the answer names them", async () => {
    const { data, stripped } = await storedData("minimal");
    expect(data).toEqual({ scope: "turn", query_tokens: 3, note: "kept" });
    expect(stripped.map((s: { path: string }) => s.path).sort()).toEqual([
      "/event/data/query_text",
      "/event/data/response_text",
    ]);
  });

  test("having no level of their own, are minimal in a session that declares none (fail closed)", async () => {
    const { data } = await storedData();
    expect(data).toEqual({ scope: "turn", query_tokens: 3, note: "kept" });
  });

  test("are kept where the session's level allows them", async () => {
    const { data, stripped } = await storedData("full");
    expect(data).toMatchObject({ query_text: "raw question", response_text: "raw answer" });
    expect(stripped).toBeUndefined();
  });
});
