import { describe, expect, test } from "bun:test";
import { hostOfUrl } from "../../src/core/hosts.ts";
import { RowsToWrite } from "../../src/modules/ingest/write-transaction.ts";
import { eventRowOf, insertEvents, type TestEvent } from "../support/events.ts";
import { flagMismatches, type StoredFlags, storedFlags } from "../support/first-flags.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { seededRandom } from "../support/random.ts";
import { testRuntime } from "../support/runtime.ts";
import { ago, batch, sessionPoster, validEvents } from "../support/telemetry-events.ts";

const seed = Number(process.env.FLAGS_SEED ?? Date.now() % 1_000_000);

async function expectFlagsByDefinition(orgIds: string[]) {
  const { ctx } = await testRuntime();
  const stored = await storedFlags(ctx.sql, orgIds);
  expect(flagMismatches(stored)).toEqual([]);
  return stored;
}

const byTime = (events: StoredFlags[]) => events.toSorted((a, b) => a.event_time.getTime() - b.event_time.getTime());

/** Batches of events over a few sessions, hosts (nested, and one of one label), reporters and agents, in any time order. */
function randomBatches(random: ReturnType<typeof seededRandom>, orgIds: string[], tag: string): TestEvent[][] {
  const hosts = [`a.x-${tag}.test`, `b.a.x-${tag}.test`, `x-${tag}.test`, `www.z-${tag}.co.uk`, `localhost-${tag}`];
  const sessions = Array.from({ length: 12 }, () => crypto.randomUUID());
  const start = Date.UTC(2026, 0, 1);
  return Array.from({ length: 10 }, () =>
    Array.from({ length: random.int(1, 40) }, () => ({
      // Whole minutes, so that ties in time happen and the id order must break them.
      event_time: new Date(start + random.int(0, 600) * 60_000),
      org_id: random.pick(orgIds),
      agent_id: random.pick(["agent-a", "agent-b", null]),
      session_id: random.chance(0.1) ? null : random.pick(sessions),
      source_role: random.pick(["agent", "edge"]),
      content_url: random.chance(0.1) ? null : `https://${random.pick(hosts)}/page-${random.int(1, 4)}`,
    })),
  );
}

describe("first-event flags", () => {
  test(`equal their definition after batches written late and out of order (seed ${seed})`, async () => {
    const { ctx } = await testRuntime();
    const random = seededRandom(seed);
    const orgs = [await createTestOrg({ type: "agent" }), await createTestOrg({ type: "platform" })];
    const orgIds = orgs.map((org) => org.id);
    for (const events of randomBatches(random, orgIds, crypto.randomUUID().slice(0, 8))) {
      await insertEvents(ctx.sql, events);
    }
    const stored = await expectFlagsByDefinition(orgIds);
    // A late batch that takes firsts over from events already stored.
    const sessions = [...new Set(stored.flatMap((e) => (e.session_id ? [e.session_id] : [])))];
    await insertEvents(
      ctx.sql,
      sessions.map((session) => ({
        event_time: new Date(Date.UTC(2025, 11, 31)),
        org_id: orgIds[0] as string,
        session_id: session,
        content_url: `https://late.${hostOfUrl(stored[0]?.content_url ?? "https://x.test/") ?? "x.test"}/`,
      })),
    );
    await expectFlagsByDefinition(orgIds);
  }, 30_000);

  test(`equal their definition when writes of the same sessions run at the same time (seed ${seed})`, async () => {
    const { ctx } = await testRuntime();
    const random = seededRandom(seed + 1);
    const orgs = [await createTestOrg({ type: "agent" }), await createTestOrg({ type: "agent" })];
    const orgIds = orgs.map((org) => org.id);
    await Promise.all(
      randomBatches(random, orgIds, crypto.randomUUID().slice(0, 8)).map((events) => insertEvents(ctx.sql, events)),
    );
    await expectFlagsByDefinition(orgIds);
  }, 30_000);

  test("an event retried through ingest is skipped, and counts once", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const sessionId = crypto.randomUUID();
    const events = [validEvents.retrieved("retry.example.org", { source_role: "agent" })];
    const post = sessionPoster(agent.key, sessionId);
    expect((await post(events)).body.events_created).toBe(1);
    expect((await post(events)).body.events_created).toBe(0);
    const stored = await expectFlagsByDefinition([agent.id]);
    expect(stored).toHaveLength(1);
    expect(stored[0]?.first_in).toBe(127);
  });

  test("a retry inheriting an agent its session has gained since takes no flag from the agent's first event", async () => {
    const owner = await createTestOrg();
    const domain = owner.domain as string;
    const agent = await createTestOrg({ type: "agent" });
    const sessionId = crypto.randomUUID();
    const first = batch([validEvents.retrieved(domain, { source_role: "agent", timestamp: ago(600) })], {
      session_id: sessionId,
    });
    const named = batch([validEvents.retrieved(domain, { source_role: "agent", timestamp: ago(480) })], {
      session_id: sessionId,
      agent_id: "bot",
    });
    expect((await call("POST", "/events", { key: agent.key, body: first })).body.events_created).toBe(1);
    expect((await call("POST", "/events", { key: agent.key, body: named })).body.events_created).toBe(1);
    // Resent as it was, the first event now reads as the session's agent's: earlier than its first.
    expect((await call("POST", "/events", { key: agent.key, body: first })).body.events_created).toBe(0);
    await expectFlagsByDefinition([agent.id]);
    const summary = await call("GET", "/agent/summary?agent_id=bot", { key: agent.key });
    expect([summary.body.total_events, summary.body.total_sessions]).toEqual([1, 1]);
  });

  test("an event resent under another session and URL counts nothing there: flags, bounds and domain firsts", async () => {
    const { ctx } = await testRuntime();
    const owner = await createTestOrg();
    const domain = owner.domain as string;
    const agent = await createTestOrg({ type: "agent" });
    const [s1, s2] = [crypto.randomUUID(), crypto.randomUUID()];
    const resent = validEvents.retrieved(domain, { source_role: "agent", timestamp: ago(3600) });
    const later = { source_role: "agent", timestamp: ago(3000), content_url: `https://${domain}/b` };
    expect((await sessionPoster(agent.key, s1)([resent])).body.events_created).toBe(1);
    expect((await sessionPoster(agent.key, s2)([validEvents.retrieved(domain, later)])).body.events_created).toBe(1);
    const elsewhere = { ...resent, content_url: later.content_url };
    expect((await sessionPoster(agent.key, s2)([elsewhere])).body.events_created).toBe(0);
    await expectFlagsByDefinition([agent.id]);
    const summary = await call("GET", "/content-owners/summary", { key: owner.key });
    expect(summary.body.total_sessions).toBe(2);
    const urls = await call("GET", "/content-owners/urls", { key: owner.key });
    const b = urls.body.items.find((item: { content_url: string }) => item.content_url === later.content_url);
    expect(b?.unique_sessions).toBe(1);
    const [bound] = await ctx.sql<{ events_from: Date; first_seen: Date }[]>`
      SELECT b.events_from, f.first_seen FROM session_bounds b JOIN session_domain_firsts f USING (session_id)
      WHERE b.session_id = ${s2}::uuid`;
    expect([bound?.events_from.toISOString(), bound?.first_seen.toISOString()]).toEqual([
      later.timestamp,
      later.timestamp,
    ]);
  });

  test("one event sent at once under several sessions is stored once, and counted by what is stored", async () => {
    const agent = await createTestOrg({ type: "agent" });
    for (let round = 0; round < 5; round++) {
      const shared = validEvents.retrieved("race.example.org", { source_role: "agent", timestamp: ago(900) });
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          sessionPoster(
            agent.key,
            crypto.randomUUID(),
          )([
            { ...shared, content_url: `https://race.example.org/${i}` },
            validEvents.retrieved("race.example.org", { source_role: "agent", timestamp: ago(600) }),
          ]),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(200));
      expect(answers.reduce((sum, answer) => sum + answer.body.events_created, 0)).toBe(7);
    }
    expect(await expectFlagsByDefinition([agent.id])).toHaveLength(35);
  });

  test("the rows a write inserts: the first of each event (id in any case, and time), none stored already", async () => {
    const { ctx } = await testRuntime();
    const agent = await createTestOrg({ type: "agent" });
    const id = crypto.randomUUID();
    const at = new Date(Date.now() - 60_000);
    const row = (eventId: string, event_time = at) => eventRowOf({ org_id: agent.id, event_id: eventId, event_time });
    const [first, again, later] = [row(id), row(id.toUpperCase()), row(id, new Date(at.getTime() + 1))];
    const fresh = await RowsToWrite.of(ctx.sql, [first, again, later], "refuse");
    expect([first, again, later].map((candidate) => fresh.writes(candidate))).toEqual([true, false, true]);
    await insertEvents(ctx.sql, [{ org_id: agent.id, event_id: id, event_time: at }]);
    const retried = await RowsToWrite.of(ctx.sql, [first, again, later], "skip");
    expect([first, again, later].map((candidate) => retried.writes(candidate))).toEqual([false, false, true]);
  });

  test("a session that began days before the batch keeps its first events", async () => {
    // Older than the day before its batch that a write first reads holders from (event-store.ts).
    const agent = await createTestOrg({ type: "agent" });
    const sessionId = crypto.randomUUID();
    const post = sessionPoster(agent.key, sessionId);
    const began = validEvents.retrieved("long.example.org", { source_role: "agent", timestamp: ago(3 * 86_400) });
    expect((await post([began])).body.events_created).toBe(1);
    const now = validEvents.retrieved("long.example.org", { source_role: "agent", timestamp: ago(60) });
    expect((await post([now])).body.events_created).toBe(1);
    expect((await expectFlagsByDefinition([agent.id])).map((event) => event.first_in).sort()).toEqual([0, 127]);
    const earlier = validEvents.retrieved("long.example.org", { source_role: "agent", timestamp: ago(5 * 86_400) });
    expect((await post([earlier])).body.events_created).toBe(1);
    const stored = byTime(await expectFlagsByDefinition([agent.id]));
    expect(stored.map((event) => [event.event_id, event.first_in])).toEqual([
      [earlier.id, 127],
      [began.id, 0],
      [now.id, 0],
    ]);
  });

  test("a session named as another organisation's session id is counted from its own events", async () => {
    // Its id is not its name (sql/067), so the holders read by name belong to the other organisation.
    const [first, second] = [await createTestOrg({ type: "agent" }), await createTestOrg({ type: "agent" })];
    const name = crypto.randomUUID();
    const post = (key: string, timestamp: string) =>
      sessionPoster(key, name)([validEvents.retrieved("shared-name.example.org", { source_role: "agent", timestamp })]);
    expect((await post(first.key, ago(600))).body.events_created).toBe(1);
    expect((await post(second.key, ago(500))).body.events_created).toBe(1);
    expect((await post(second.key, ago(400))).body.events_created).toBe(1);
    expect((await post(second.key, ago(700))).body.events_created).toBe(1);
    const stored = await expectFlagsByDefinition([first.id, second.id]);
    const ofSecond = byTime(stored.filter((event) => event.org_id === second.id));
    expect(new Set(ofSecond.map((event) => event.session_id)).size).toBe(1);
    expect(ofSecond[0]?.session_id).not.toBe(name);
    expect(ofSecond.map((event) => event.first_in)).toEqual([127, 0, 0]);
  });

  test("a batch resending stored events beside an earlier event that takes their flags is counted exactly", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const sessionId = crypto.randomUUID();
    const post = sessionPoster(agent.key, sessionId);
    const sent = [
      validEvents.retrieved("retry.example.org", { source_role: "agent", timestamp: ago(600) }),
      validEvents.cited("retry.example.org", { source_role: "agent", timestamp: ago(300) }),
    ];
    expect((await post(sent)).body.events_created).toBe(2);
    const earlier = validEvents.retrieved("retry.example.org", { source_role: "agent", timestamp: ago(3600) });
    expect((await post([...sent, earlier])).body.events_created).toBe(1);
    const stored = await expectFlagsByDefinition([agent.id]);
    expect(stored).toHaveLength(3);
    expect(stored.find((event) => event.event_id === earlier.id)?.first_in).toBe(127);
  });
});
