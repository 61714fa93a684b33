import { expect } from "bun:test";
import { createTestOrg, type TestOrg } from "./fixtures.ts";
import { type CallResult, call } from "./http.ts";
import { ago } from "./telemetry-events.ts";
import { sessionCount, storedEvents } from "./telemetry-store.ts";

export const site = "conformance.example.org";
export const contentUrl = `https://${site}/article`;

/** A v1 session document around `events` (override any field; `undefined` drops one). */
export function sessionDocument(events: unknown[], extra: Record<string, unknown> = {}) {
  return {
    document_type: "session",
    schema_version: "1.0",
    session_id: crypto.randomUUID(),
    started_at: ago(3600),
    events,
    ...extra,
  };
}

/** Posts a document to POST /events as a new agent organisation of its own. */
export async function post(body: unknown): Promise<{ res: CallResult; agent: TestOrg }> {
  const agent = await createTestOrg({ type: "agent" });
  const res = await call("POST", "/events", { key: agent.key, body });
  return { res, agent };
}

/**
 * Expects a 400 validation problem naming `path` (and, when given, a message
 * containing `says`), with nothing of the document stored. Returns the problem.
 */
export async function expectRefused(body: unknown, path: string, says?: string) {
  const { res, agent } = await post(body);
  expect(res.status).toBe(400);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  expect(res.body.code).toBe("validation_failed");
  const error = res.body.errors.find((e: { path: string }) => e.path === path);
  expect({ path, found: error !== undefined, errors: error ? undefined : res.body.errors }).toEqual({
    path,
    found: true,
    errors: undefined,
  });
  if (says !== undefined) expect(error.message).toContain(says);
  expect(await storedEvents(agent.id)).toEqual([]);
  expect(await sessionCount(agent.id)).toBe(0);
  return res.body;
}

/** Expects the document stored; returns the answer and what was stored. */
export async function expectAccepted(body: unknown) {
  const { res, agent } = await post(body);
  expect({ status: res.status, body: res.status === 200 ? undefined : res.body }).toEqual({
    status: 200,
    body: undefined,
  });
  return { body: res.body, stored: await storedEvents(agent.id), agent };
}
