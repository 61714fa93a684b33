import { expect, test } from "bun:test";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";

// README, "One retrieval, several observers": each report is an event, counted in its own role.
test("a retrieval reported by the origin, a CDN and the agent counts once per report, in each role's row", async () => {
  const owner = await createTestOrg();
  const cdn = await createTestOrg({ type: "platform" });
  const agent = await createTestOrg({ type: "agent" });
  const seen = { content_url: `https://${owner.domain}/story`, content_telemetry_id: crypto.randomUUID() };
  const reports = [
    {
      key: owner.key,
      body: batch([validEvents.retrieved(owner.domain as string, { ...seen, source_role: "origin" })]),
    },
    { key: cdn.key, body: batch([validEvents.retrieved(owner.domain as string, { ...seen, source_role: "edge" })]) },
    {
      key: agent.key,
      body: batch([validEvents.retrieved(owner.domain as string, { ...seen, source_role: "agent" })], {
        session_id: crypto.randomUUID(),
      }),
    },
  ];
  for (const report of reports) expect((await call("POST", "/events", report)).status).toBe(200);

  const summary = (await call("GET", "/content-owners/summary", { key: owner.key })).body;
  expect(summary.total_events).toBe(3);
  expect(
    summary.events_by_source.map((row: { source_role: string; count: number }) => [row.source_role, row.count]).sort(),
  ).toEqual([
    ["agent", 1],
    ["edge", 1],
    ["origin", 1],
  ]);
  const urls = (await call("GET", "/content-owners/urls", { key: owner.key })).body;
  expect(urls.items).toEqual([expect.objectContaining({ content_url: seen.content_url, total_events: 3 })]);
});

// README, "URL identity": the standard correlates URLs by exact match; only the host decides the owner.
test("spellings of one page are counted as the URLs sent, all on their owner's domain", async () => {
  const owner = await createTestOrg();
  const domain = owner.domain as string;
  const spellings = [
    `https://www.${domain}/a`,
    `https://WWW.${domain.toUpperCase()}/a`,
    `https://www.${domain}:443/a`,
    `https://www.${domain}/a#top`,
  ];
  const events = spellings.map((content_url) => validEvents.retrieved(domain, { content_url, source_role: "agent" }));
  const posted = await call("POST", "/events", {
    key: owner.key,
    body: batch(events, { session_id: crypto.randomUUID() }),
  });
  expect(posted.body.events_created).toBe(4);
  const summary = (await call("GET", "/content-owners/summary", { key: owner.key })).body;
  expect([summary.total_events, summary.total_sessions]).toEqual([4, 1]);
  const urls = (await call("GET", "/content-owners/urls", { key: owner.key })).body;
  expect(urls.items.map((item: { content_url: string }) => item.content_url).sort()).toEqual(spellings.toSorted());
  expect(urls.items.map((item: { unique_sessions: number }) => item.unique_sessions)).toEqual([1, 1, 1, 1]);
});
