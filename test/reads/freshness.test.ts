import { expect, test } from "bun:test";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";

test("every read says how fresh it is, and counts what was acknowledged before that moment", async () => {
  const owner = await createTestOrg();
  const agent = await createTestOrg({ type: "agent" });
  const sessionId = crypto.randomUUID();
  const event = validEvents.retrieved(owner.domain as string, { source_role: "agent" });
  const posted = await call("POST", "/events", { key: agent.key, body: batch([event], { session_id: sessionId }) });
  expect(posted.status).toBe(200);
  const acknowledged = Date.now();

  for (const path of ["summary", "events", "urls", "timeseries", "export"]) {
    const res = await call("GET", `/content-owners/${path}`, { key: owner.key });
    expect(res.status).toBe(200);
    const asOf = res.headers.get("x-data-as-of") as string;
    expect(Date.parse(asOf)).toBeGreaterThanOrEqual(acknowledged);
    if (path !== "export") expect(res.body.as_of).toBe(asOf);
  }
  // Sessions are counted when the write is acknowledged: nothing to wait for.
  const summary = await call("GET", "/content-owners/summary", { key: owner.key });
  expect(summary.body).toMatchObject({ total_events: 1, total_sessions: 1 });
  const urls = await call("GET", "/content-owners/urls", { key: owner.key });
  expect(urls.body.items).toEqual([expect.objectContaining({ content_url: event.content_url, unique_sessions: 1 })]);
});
